#pragma once
// The user names and passwords register_url_credentials (download.h) takes out of URLs, kept by
// origin (scheme, host and port) for this process's requests there (download_credentials.cpp).
#include <optional>
#include <string>
#include <utility>

namespace cvm::install {

// The user name and password kept for `url`'s origin, if any: for that origin's requests alone,
// so a redirect to another host, or another port or scheme, gets none.
std::optional<std::pair<std::string, std::string>> url_credentials_for(const std::string& url);

} // namespace cvm::install
