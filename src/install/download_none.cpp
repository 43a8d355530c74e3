// Built instead of download_curl.cpp when CVM_WITH_NETWORK is off: only file:// URLs work.
#include "install/download.h"

#include "install/error.h"
#include "install/sha256.h"

#include <fstream>
#include <sstream>

namespace cvm::install {

std::filesystem::path file_url_path(const std::string& url) {
    if (url.rfind("file://", 0) != 0) return {};
    return std::filesystem::u8path(url.substr(7));
}

bool url_allowed(const std::string& url, const DownloadOptions&, std::string* why) {
    if (!file_url_path(url).empty()) return true;
    if (why) *why = "this cvm was built without network support";
    return false;
}

void download_all(const std::vector<DownloadRequest>& requests, const DownloadOptions&) {
    for (const auto& r : requests)
        fail_operation("cannot download " + r.url + ": this cvm was built without network support");
}

std::string fetch_text(const std::string& url, const DownloadOptions&, std::uint64_t) {
    auto path = file_url_path(url);
    if (path.empty())
        fail_operation("cannot download " + url + ": this cvm was built without network support");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_operation("cannot read " + path.string());
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

} // namespace cvm::install
