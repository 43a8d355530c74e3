// Built instead of download_curl.cpp when CVM_WITH_NETWORK is off: only file:// URLs work.
#include "install/download.h"

#include "config/url_credentials.h"
#include "install/error.h"
#include "install/sha256.h"
#include "platform/platform.h"

namespace cvm::install {

std::filesystem::path file_url_path(const std::string& url) {
    if (url.rfind("file://", 0) != 0) return {};
    return std::filesystem::u8path(url.substr(7));
}

// No request is made, so nothing is kept; the URL comes back without them all the same (it is
// shown in messages and recorded in entries).
std::string register_url_credentials(const std::string& url) {
    return without_url_credentials(url);
}

bool url_allowed(const std::string& url, const DownloadOptions&, std::string* why) {
    if (!file_url_path(url).empty()) return true;
    if (why) *why = "this cvm was built without network support";
    return false;
}

void download_all(const std::vector<DownloadRequest>& requests, const DownloadOptions&) {
    for (const auto& r : requests)
        fail_operation("cannot download " + without_url_credentials(r.url) +
                       ": this cvm was built without network support");
}

std::string fetch_text(const std::string& url, const DownloadOptions&, std::uint64_t max_size) {
    auto path = file_url_path(url);
    if (path.empty())
        fail_operation("cannot download " + without_url_credentials(url) +
                       ": this cvm was built without network support");
    auto read = platform::read_whole_file(path.u8string(), static_cast<std::size_t>(max_size));
    if (read.too_large)
        fail_operation("cannot read " + path.u8string() + ": larger than " +
                       std::to_string(max_size) + " bytes");
    if (!read.text)
        fail_operation("cannot read " + path.u8string() + ": not a regular file that can be read");
    return std::move(*read.text);
}

} // namespace cvm::install
