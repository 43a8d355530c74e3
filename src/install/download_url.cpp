// file_url_path (download.h): the one rule turning a file: URL into a local path, over the URL
// reading of either build (file_url_given_path, download_url.h).
#include "install/download_url.h"
#include "install/download.h"

#include <cctype>

namespace cvm::install {

std::filesystem::path file_url_path(const std::string& url) {
    if (url.rfind("file:", 0) != 0) return {};
    std::string p = file_url_given_path(url);
    if (p.empty()) return {};
    // file:///C:/x on Windows
    if (p.size() >= 3 && p[0] == '/' && std::isalpha(static_cast<unsigned char>(p[1])) &&
        p[2] == ':')
        p.erase(0, 1);
    return std::filesystem::u8path(p);
}

} // namespace cvm::install
