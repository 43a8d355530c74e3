#pragma once
// Downloads through libcurl: several at once, HTTPS verified (plain http only for loopback or
// when explicitly allowed), resume of a partial file with HTTP Range, retries with backoff on
// transient errors, connect and stall timeouts, SHA-256 verified before a file is accepted.
//
// A download lands in `<destination>.part` and is renamed to `destination` only once its
// checksum matched, so a file in the cache is always complete and verified. A failed download
// removes its `.part` (so does SIGINT/SIGTERM: platform/cleanup_on_signal.h); retries within
// one run resume it. A transfer is stopped as soon as more bytes arrive than the known size
// (the manifest's, Content-Length, else max_size), when its average rate over a window falls
// below a minimum, and at an overall deadline that grows with the size (download_settings.h).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "install/error.h"

namespace cvm::install {

class Progress;
class DownloadTap;

struct DownloadRequest {
    std::string url;
    std::filesystem::path destination;
    std::string sha256;              // expected, lower-case hex; empty: not checked
    std::uint64_t expected_size = 0; // 0 when unknown
    std::string label;               // for progress lines; defaults to the file name
    // Told of every byte written and of the outcome, for a reader on another thread
    // (download_tap.h); a file found in the cache is reported verified at once.
    std::shared_ptr<DownloadTap> tap;
};

struct DownloadOptions {
    bool allow_insecure_http = false;  // http:// to hosts other than loopback
    unsigned parallel = 4;             // transfers at once
    unsigned retries = 4;              // further attempts after a transient failure
    long connect_timeout_s = 30;       // CVM_CONNECT_TIMEOUT
    long stall_timeout_s = 60;         // CVM_STALL_TIMEOUT: abort when no byte arrives this long
    long retry_delay_ms = 1000;        // CVM_RETRY_DELAY_MS: first backoff, doubled each retry
    std::uint64_t min_rate = 10 << 10; // CVM_DOWNLOAD_MIN_RATE: bytes/s over the window (0: off)
    long rate_window_s = 30;           // CVM_DOWNLOAD_RATE_WINDOW
    long deadline_s = 600;             // CVM_DOWNLOAD_DEADLINE: seconds (0: off), plus
    std::uint64_t deadline_rate = 32 << 10; // CVM_DOWNLOAD_DEADLINE_RATE: the size at this rate
    std::uint64_t max_size = std::uint64_t{16} << 30; // CVM_DOWNLOAD_MAX_SIZE: when none is known
    Progress* progress = nullptr;

    // Defaults, with the config files' [download] table and the CVM_* variables applied.
    static DownloadOptions from_environment();
};

// A download that is not the file asked for: which check failed, what the request expected and
// what came. (A body past max_size when no size is known is no mismatch: nothing was expected.)
struct DownloadMismatch {
    enum class Check {
        Sha256,        // the whole file's SHA-256
        Size,          // the whole file's size
        AnnouncedSize, // the size the server announced (Content-Length), before the body
        SentSize,      // the body, stopped as soon as it passed the expected size
    };
    Check check = Check::Sha256;
    std::string expected_sha256, actual_sha256; // Check::Sha256
    std::uint64_t expected_size = 0;
    std::uint64_t actual_size = 0; // Size, AnnouncedSize: that size; SentSize: the bytes when stopped

    // "checksum mismatch: expected sha256 X, got Y", "size mismatch: expected N bytes, got M",
    // "the server announces N bytes, more than the M bytes <whose>", "the server sent more than
    // the M bytes <whose>"; `whose` says where the expected size came from.
    std::string describe(const std::string& whose = "expected") const;
};

// download_all's failure when a download is not the file asked for (code "checksum").
class DownloadMismatchError : public InstallError {
public:
    DownloadMismatchError(const std::string& message, DownloadMismatch mismatch)
        : InstallError(Kind::Operation, message, "checksum"), mismatch_(std::move(mismatch)) {}
    const DownloadMismatch& mismatch() const { return mismatch_; }

private:
    DownloadMismatch mismatch_;
};

// "5000 bytes", "3145728 bytes (3.0 MiB)": a size in a download's messages.
std::string bytes_text(std::uint64_t n);

// Whether the URL may be fetched under `options`: https, file, or http to 127.0.0.1 /
// localhost / ::1 (or any host when allow_insecure_http). Sets `why` when not.
bool url_allowed(const std::string& url, const DownloadOptions& options, std::string* why);

// Downloads every request (skipping those whose destination already holds a file with the
// right checksum). Throws InstallError naming the URL and the reason on the first failure, after
// stopping the other transfers and removing every partial file: a DownloadMismatchError when a
// file is not the one asked for.
void download_all(const std::vector<DownloadRequest>& requests, const DownloadOptions& options);

// Fetches a small document (a manifest) into memory, with the same retries and checks.
std::string fetch_text(const std::string& url, const DownloadOptions& options,
                       std::uint64_t max_size = 64 << 20);

// The local path of a file:// URL, empty for other URLs.
std::filesystem::path file_url_path(const std::string& url);

// Takes the user name and password out of `url` (CVM_MIRROR=https://me:secret@mirror/...), keeps
// them for this process's requests to that scheme, host and port only (never to a host a
// redirect leads to), and returns the URL without them: the form shown in messages and stored
// in entries and cvm.lock. Other URLs come back as they are.
std::string register_url_credentials(const std::string& url);

} // namespace cvm::install
