#pragma once
// URLs as the downloads read them. With network their parts come from libcurl's own parser
// (curl_url, in download_url_curl.cpp, with url_allowed); without it only file:// URLs are read
// (download_none.cpp). file_url_path (download.h) is one rule over either reading
// (download_url.cpp).
#include <optional>
#include <string>

namespace cvm::install {

struct UrlParts {
    std::string scheme, host, path, port; // port: as given, else the scheme's
};

// The parts of `url` as libcurl reads it, the path percent-decoded; nullopt for a URL it refuses.
// Only with network (download_url_curl.cpp).
std::optional<UrlParts> parse_url(const std::string& url);

// This machine as an http:// URL names it: 127.0.0.1, localhost, ::1 or [::1], exactly so written.
bool loopback_host(const std::string& host);

// The path of a file: URL as this build reads it, before file_url_path's own rules: libcurl's
// percent-decoded path with network, what follows "file://" without; empty when there is none.
std::string file_url_given_path(const std::string& url);

} // namespace cvm::install
