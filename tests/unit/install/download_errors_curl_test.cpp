// What a failed transfer means (download_errors_curl.h): which failures are retried, which say the
// host was not reached, and libcurl's codes in cvm's words.
#include "install/download_errors_curl.h"

#include <catch2/catch.hpp>

#include <cerrno>

using namespace cvm::install;

TEST_CASE("download failures: the network's and the server's hiccups are transient",
          "[download_errors]") {
    for (CURLcode code :
         {CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_OPERATION_TIMEDOUT,
          CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_HTTP2,
          CURLE_HTTP2_STREAM, CURLE_SSL_CONNECT_ERROR})
        CHECK(transient_failure(code, 0));
    for (long status : {500L, 502L, 503L, 504L, 408L, 429L})
        CHECK(transient_failure(CURLE_HTTP_RETURNED_ERROR, status));
    for (long status : {400L, 401L, 403L, 404L, 410L, 416L})
        CHECK_FALSE(transient_failure(CURLE_HTTP_RETURNED_ERROR, status));
    // What another attempt would not change.
    for (CURLcode code :
         {CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_UNSUPPORTED_PROTOCOL,
          CURLE_URL_MALFORMAT, CURLE_WRITE_ERROR, CURLE_FILE_COULDNT_READ_FILE,
          CURLE_COULDNT_RESOLVE_PROXY, CURLE_ABORTED_BY_CALLBACK, CURLE_OUT_OF_MEMORY})
        CHECK_FALSE(transient_failure(code, 0));
}

TEST_CASE("download failures: a host not reached at all", "[download_errors]") {
    CHECK(host_unreached(CURLE_COULDNT_RESOLVE_HOST));
    CHECK(host_unreached(CURLE_COULDNT_RESOLVE_PROXY));
    CHECK(host_unreached(CURLE_COULDNT_CONNECT));
    CHECK_FALSE(host_unreached(CURLE_OPERATION_TIMEDOUT));
    CHECK_FALSE(host_unreached(CURLE_HTTP_RETURNED_ERROR));
    CHECK(unreached_text(CURLE_COULDNT_RESOLVE_HOST, "https://nowhere.example/x") ==
          "the host nowhere.example was not found (DNS lookup failed)");
    CHECK(unreached_text(CURLE_COULDNT_RESOLVE_PROXY, "https://nowhere.example/x") ==
          "the proxy's host was not found (DNS lookup failed; check https_proxy)");
    CHECK(unreached_text(CURLE_COULDNT_CONNECT, "http://127.0.0.1:9/x") ==
          "cannot connect to 127.0.0.1:9 (connection refused, or no route to it)");
    CHECK(unreached_text(CURLE_COULDNT_CONNECT, "https://mirror.example/x") ==
          "cannot connect to mirror.example:443 (connection refused, or no route to it)");
}

TEST_CASE("download failures: libcurl's codes in cvm's words", "[download_errors]") {
    CHECK(transfer_problem(CURLE_OPERATION_TIMEDOUT) == "timed out");
    CHECK(transfer_problem(CURLE_PEER_FAILED_VERIFICATION) ==
          "the server's certificate was not accepted");
    CHECK(transfer_problem(CURLE_UNSUPPORTED_PROTOCOL) ==
          "the URL's scheme is not one cvm downloads from (https://, file://)");
    CHECK(transfer_problem(CURLE_PARTIAL_FILE) ==
          "the server closed the connection before the whole file arrived");
    CHECK(transfer_problem(CURLE_FILE_COULDNT_READ_FILE) ==
          "the file cannot be read (missing, or no permission)");
    CHECK(transfer_problem(CURLE_RANGE_ERROR) == "the server cannot resume the file");
    CHECK(transfer_problem(CURLE_TOO_MANY_REDIRECTS) == "the transfer failed (error 47)");

    const std::string url = "https://mirror.example/x";
    CHECK(failure_detail(CURLE_HTTP_RETURNED_ERROR, 404, 0, 60, url) == "HTTP 404 (not found)");
    CHECK(failure_detail(CURLE_HTTP_RETURNED_ERROR, 503, 0, 60, url) == "HTTP 503");
    CHECK(failure_detail(CURLE_OPERATION_TIMEDOUT, 0, 0, 60, url) ==
          "no answer within the timeout (CVM_CONNECT_TIMEOUT, CVM_STALL_TIMEOUT)");
    CHECK(failure_detail(CURLE_OPERATION_TIMEDOUT, 200, 0, 60, url) ==
          "stalled: no data for 60 s (CVM_STALL_TIMEOUT)");
    CHECK(failure_detail(CURLE_OPERATION_TIMEDOUT, 0, 5, 7, url) ==
          "stalled: no data for 7 s (CVM_STALL_TIMEOUT)");
    CHECK(failure_detail(CURLE_COULDNT_RESOLVE_HOST, 0, 0, 60, url) ==
          "the host mirror.example was not found (DNS lookup failed)");
    CHECK(failure_detail(CURLE_RECV_ERROR, 0, 0, 60, url) ==
          "the connection failed while receiving (or the server's answer was too large)");

    CHECK(failure_hint(CURLE_PEER_FAILED_VERIFICATION, 0) ==
          "; the server's certificate was not accepted");
    CHECK(failure_hint(CURLE_HTTP_RETURNED_ERROR, 404) == "; check the version, or CVM_MIRROR");
    CHECK(failure_hint(CURLE_HTTP_RETURNED_ERROR, 500).empty());
    CHECK(failure_hint(CURLE_RECV_ERROR, 0).empty());
}

TEST_CASE("download failures: a failed write's name for scripts", "[download_errors]") {
    CHECK(std::string(write_error_code(ENOSPC)) == "no_space");
    CHECK(std::string(write_error_code(EACCES)) == "permission");
    CHECK(std::string(write_error_code(EPERM)) == "permission");
    CHECK(std::string(write_error_code(EROFS)) == "permission");
    CHECK(std::string(write_error_code(EIO)) == "io");
}
