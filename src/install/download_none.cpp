// Built instead of download_curl.cpp (and the other *_curl.cpp) when CVM_WITH_NETWORK is off:
// only file:// URLs work. file_url_path (download_url.cpp) and the credentials
// (download_credentials.cpp) are the same as with network.
#include "install/download.h"
#include "install/download_url.h"

#include "config/url_credentials.h"
#include "install/error.h"
#include "platform/platform.h"

namespace cvm::install {

// Without libcurl's URL parser, what follows "file://" as it is written.
std::string file_url_given_path(const std::string& url) {
    if (url.rfind("file://", 0) != 0) return {};
    return url.substr(7);
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
