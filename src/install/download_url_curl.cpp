// URLs read by libcurl's own parser (curl_url): their parts, the path of a file: URL, and which
// URLs may be fetched (url_allowed, download.h). Built with network only.
#include "install/download.h"
#include "install/download_url.h"

#include "config/url_credentials.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>

namespace cvm::install {

std::optional<UrlParts> parse_url(const std::string& url) {
    CURLU* u = curl_url();
    std::optional<UrlParts> out;
    if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
        UrlParts parts;
        char* s = nullptr;
        if (curl_url_get(u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK) {
            parts.scheme = s;
            curl_free(s);
        }
        if (curl_url_get(u, CURLUPART_HOST, &s, 0) == CURLUE_OK) {
            parts.host = s;
            curl_free(s);
        }
        if (curl_url_get(u, CURLUPART_PORT, &s, CURLU_DEFAULT_PORT) == CURLUE_OK) {
            parts.port = s;
            curl_free(s);
        }
        if (curl_url_get(u, CURLUPART_PATH, &s, CURLU_URLDECODE) == CURLUE_OK) {
            parts.path = s;
            curl_free(s);
        }
        out = parts;
    }
    curl_url_cleanup(u);
    return out;
}

bool loopback_host(const std::string& host) {
    return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]";
}

std::string file_url_given_path(const std::string& url) {
    auto parts = parse_url(url);
    return parts ? parts->path : std::string();
}

bool url_allowed(const std::string& url, const DownloadOptions& options, std::string* why) {
    auto parts = parse_url(url);
    auto refuse = [&](const std::string& reason) {
        if (why) *why = reason;
        return false;
    };
    if (!parts) return refuse("\"" + without_url_credentials(url) + "\" is not a URL");
    std::string scheme = parts->scheme;
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (scheme == "https" || scheme == "file") return true;
    if (scheme == "http") {
        if (loopback_host(parts->host) || options.allow_insecure_http) return true;
        return refuse("plain http:// is only used for this machine (127.0.0.1, localhost, ::1); "
                      "use https://, or set CVM_ALLOW_HTTP=1 if you trust the network");
    }
    return refuse("unsupported URL scheme \"" + parts->scheme + "\" (use https://, or file://)");
}

} // namespace cvm::install
