#pragma once
// Downloads through libcurl: several at once, HTTPS verified (plain http only for loopback or
// when explicitly allowed), resume of a partial file with HTTP Range, retries with backoff on
// transient errors, connect and stall timeouts, SHA-256 verified before a file is accepted.
//
// A download lands in `<destination>.part` and is renamed to `destination` only once its
// checksum matched, so a file in the cache is always complete and verified.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cvm::install {

class Progress;

struct DownloadRequest {
    std::string url;
    std::filesystem::path destination;
    std::string sha256;              // expected, lower-case hex; empty: not checked
    std::uint64_t expected_size = 0; // 0 when unknown
    std::string label;               // for progress lines; defaults to the file name
};

struct DownloadOptions {
    bool allow_insecure_http = false; // http:// to hosts other than loopback
    unsigned parallel = 4;            // transfers at once
    unsigned retries = 4;             // further attempts after a transient failure
    long connect_timeout_s = 30;      // CVM_CONNECT_TIMEOUT
    long stall_timeout_s = 60;        // CVM_STALL_TIMEOUT: abort when no byte arrives this long
    long retry_delay_ms = 1000;       // CVM_RETRY_DELAY_MS: first backoff, doubled each retry
    Progress* progress = nullptr;

    // Defaults, with the CVM_* variables above applied.
    static DownloadOptions from_environment();
};

// Whether the URL may be fetched under `options`: https, file, or http to 127.0.0.1 /
// localhost / ::1 (or any host when allow_insecure_http). Sets `why` when not.
bool url_allowed(const std::string& url, const DownloadOptions& options, std::string* why);

// Downloads every request (skipping those whose destination already holds a file with the
// right checksum). Throws InstallError naming the URL on the first failure, after stopping
// the other transfers; partial files are kept for a later resume.
void download_all(const std::vector<DownloadRequest>& requests, const DownloadOptions& options);

// Fetches a small document (a manifest) into memory, with the same retries and checks.
std::string fetch_text(const std::string& url, const DownloadOptions& options,
                       std::uint64_t max_size = 64 << 20);

// The local path of a file:// URL, empty for other URLs.
std::filesystem::path file_url_path(const std::string& url);

} // namespace cvm::install
