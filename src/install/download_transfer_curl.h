#pragma once
// One transfer of the downloads through libcurl (download_transfer_curl.cpp): what it holds
// across its attempts, how an attempt is handed to libcurl, and how its body lands in the part
// file (hashed as it grows, held to its size) or in memory. download_curl.cpp runs the transfers.
// Included by the files built with network only.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <curl/curl.h>

#include "install/download.h"
#include "install/download_limits.h"
#include "install/sha256.h"
#include "platform/cleanup_on_signal.h"
#include "platform/shared_file.h"

namespace cvm::install {

struct Transfer {
    using Clock = std::chrono::steady_clock;

    const DownloadRequest* request = nullptr;
    std::string url;
    std::filesystem::path part;
    std::string* memory = nullptr; // fetch_text
    std::uint64_t max_size = 0;
    CURL* easy = nullptr;
    platform::SharedFile out; // the part file: a tap reads it, and it is renamed while read
    Sha256 hash;
    std::uint64_t hashed = 0;  // bytes of the part file fed to `hash`
    std::uint64_t resumed = 0; // bytes already there when this attempt started
    std::uint64_t received = 0;
    unsigned attempt = 0;
    unsigned unreachable = 0; // attempts that found no host
    unsigned redirects = 0;   // followed so far (each checked as CVM_MIRROR is)
    bool restarted_clean = false;
    bool kept = false;                   // renamed into place: not removed with the Downloader
    platform::CleanupOnSignal on_signal; // removes the part file if cvm is interrupted
    Clock::time_point not_before{};
    Clock::time_point first_start{}; // of the first attempt: the deadline counts from here
    RateWindow rate;                 // this attempt's bytes over the last rate window
    std::string abort_reason;        // set by on_write when the body outgrows its size
    std::optional<DownloadMismatch> abort_mismatch; // with abort_reason, past the request's size
    bool checked_length = false;
    int progress_id = -1;
    std::string write_error;
    int write_errno = 0; // the errno of a failed write to the part file, 0 otherwise
    char errbuf[CURL_ERROR_SIZE] = {};
    bool finished = false;
};

// The request's label for progress lines: its own, else the destination's file name.
std::string download_label(const DownloadRequest& r);

// libcurl's write callback (`user`: the Transfer): appends the bytes to the part file (or to
// `memory`), or stops the body (returns 0) past its size or on a failed write, saying why in
// abort_reason or write_error. A redirect's own body is dropped.
size_t write_body(char* data, size_t size, size_t count, void* user);

// The bytes of the part file an attempt resumes from: what is there, unless larger than the
// request's size or unreadable (then removed), fed into the checksum unless already hashed.
std::uint64_t resumable_bytes(Transfer& t);

// The size `t`'s deadline is reckoned from: the request's, else the one the server announced,
// else the most it may be (its own max_size in memory, else `max_size`: the options').
std::uint64_t deadline_size(const Transfer& t, std::uint64_t max_size);

// A libcurl handle for `t`'s next attempt (its URL, from `t.resumed` bytes on), with the
// options' timeouts and the credentials kept for its origin; the caller runs it.
CURL* start_easy(Transfer& t, const DownloadOptions& options);

} // namespace cvm::install
