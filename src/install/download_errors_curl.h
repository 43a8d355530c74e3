#pragma once
// What a failed transfer means (download_errors_curl.cpp): libcurl's codes in cvm's words (its own
// text names its internals: "Too large response headers", "Protocol \"file\" not supported"),
// which failures are worth another attempt, which say the host was not reached at all, and the
// failure's name for scripts (error.h). Included by the files built with network only.
#include <curl/curl.h>

#include <cstdint>
#include <string>

namespace cvm::install {

// libcurl's result in cvm's words ("timed out", "the connection failed while sending", ...).
std::string transfer_problem(CURLcode code);

// Errors worth another attempt: the network or the server hiccuped (a timeout, a dropped
// connection, HTTP 5xx, 408 or 429 when `code` is CURLE_HTTP_RETURNED_ERROR).
bool transient_failure(CURLcode code, long http_status);

// The host cannot be reached at all (offline, wrong name, nothing listening): retried once only,
// so that an install without network fails within seconds.
bool host_unreached(CURLcode code);

// Why a host cannot be reached, naming it (and its port) as `url` gives them: "the host X was not
// found (DNS lookup failed)", "cannot connect to X:P (connection refused, or no route to it)".
std::string unreached_text(CURLcode code, const std::string& url);

// What went wrong in one attempt at `url`, as its failure message says it: transfer_problem, or
// for HTTP errors "HTTP 404 (not found)", for timeouts whether nothing answered or the data
// stalled (`received`: bytes of this attempt; `stall_timeout_s`: CVM_STALL_TIMEOUT in force), for
// an unreached host unreached_text.
std::string failure_detail(CURLcode code, long http_status, std::uint64_t received,
                           long stall_timeout_s, const std::string& url);

// What the failure message adds after the detail to say what to check ("; check the version, or
// CVM_MIRROR" for a 404), empty when nothing.
std::string failure_hint(CURLcode code, long http_status);

// The failure's name (error.h) for a write that failed with errno `err`: "no_space" (ENOSPC,
// EDQUOT), "permission" (EACCES, EPERM, EROFS), else "io".
const char* write_error_code(int err);

} // namespace cvm::install
