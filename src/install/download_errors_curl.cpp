// What a failed transfer means, from libcurl's codes (download_errors_curl.h).
#include "install/download_errors_curl.h"

#include "install/download_url.h"

#include <cerrno>

namespace cvm::install {

std::string transfer_problem(CURLcode code) {
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
        return "timed out";
    case CURLE_SSL_CONNECT_ERROR:
        return "the TLS connection could not be set up";
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        return "the server's certificate was not accepted";
    case CURLE_RECV_ERROR:
        return "the connection failed while receiving (or the server's answer was too large)";
    case CURLE_SEND_ERROR:
        return "the connection failed while sending";
    case CURLE_PARTIAL_FILE:
        return "the server closed the connection before the whole file arrived";
    case CURLE_GOT_NOTHING:
        return "the server closed the connection without an answer";
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return "the HTTP/2 connection failed";
    case CURLE_WEIRD_SERVER_REPLY:
        return "the server's answer is not HTTP";
    case CURLE_UNSUPPORTED_PROTOCOL:
        return "the URL's scheme is not one cvm downloads from (https://, file://)";
    case CURLE_URL_MALFORMAT:
        return "the URL is malformed";
    case CURLE_FILE_COULDNT_READ_FILE:
        return "the file cannot be read (missing, or no permission)";
    case CURLE_RANGE_ERROR:
        return "the server cannot resume the file";
    case CURLE_OUT_OF_MEMORY:
        return "out of memory (the server's answer may be too large)";
    case CURLE_ABORTED_BY_CALLBACK:
        return "stopped";
    default:
        return "the transfer failed (error " + std::to_string(static_cast<int>(code)) + ")";
    }
}

bool transient_failure(CURLcode code, long http_status) {
    switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    case CURLE_HTTP_RETURNED_ERROR:
        return http_status >= 500 || http_status == 408 || http_status == 429;
    default:
        return false;
    }
}

bool host_unreached(CURLcode code) {
    return code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY ||
           code == CURLE_COULDNT_CONNECT;
}

std::string unreached_text(CURLcode code, const std::string& url) {
    auto parts = parse_url(url);
    std::string host = parts && !parts->host.empty() ? parts->host : url;
    if (code == CURLE_COULDNT_RESOLVE_HOST)
        return "the host " + host + " was not found (DNS lookup failed)";
    if (code == CURLE_COULDNT_RESOLVE_PROXY)
        return "the proxy's host was not found (DNS lookup failed; check https_proxy)";
    return "cannot connect to " + host + (parts && !parts->port.empty() ? ":" + parts->port : "") +
           " (connection refused, or no route to it)";
}

std::string failure_detail(CURLcode code, long http_status, std::uint64_t received,
                           long stall_timeout_s, const std::string& url) {
    if (host_unreached(code)) return unreached_text(code, url);
    if (code == CURLE_HTTP_RETURNED_ERROR)
        return "HTTP " + std::to_string(http_status) + (http_status == 404 ? " (not found)" : "");
    if (code == CURLE_OPERATION_TIMEDOUT && received == 0 && http_status == 0)
        return "no answer within the timeout (CVM_CONNECT_TIMEOUT, CVM_STALL_TIMEOUT)";
    if (code == CURLE_OPERATION_TIMEDOUT)
        return "stalled: no data for " + std::to_string(stall_timeout_s) + " s (CVM_STALL_TIMEOUT)";
    return transfer_problem(code);
}

std::string failure_hint(CURLcode code, long http_status) {
    if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE)
        return "; the server's certificate was not accepted";
    if (http_status == 404) return "; check the version, or CVM_MIRROR";
    return "";
}

const char* write_error_code(int err) {
    if (err == ENOSPC) return "no_space";
#ifdef EDQUOT
    if (err == EDQUOT) return "no_space";
#endif
    if (err == EACCES || err == EPERM || err == EROFS) return "permission";
    return "io";
}

} // namespace cvm::install
