#pragma once
// The limits a transfer is held to (download.h says which and why), decided without libcurl
// (download_limits.cpp): a body no larger than its size, an end before its deadline, a rate no
// lower than the minimum over the rate window. Each says, when passed, the words of the failure.
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "install/download.h"

namespace cvm::install {

// A body past its size: the words, and, past the size the request gave (the manifest's), what
// makes it not the file asked for (a body past max_size, when no size was known, has none).
struct SizeOverrun {
    std::string reason;
    std::optional<DownloadMismatch> mismatch;
};

// The size the server announces (Content-Length plus the bytes resumed) against `expected` (the
// request's; 0: none) or, without one, max_size: checked once, before the body.
std::optional<SizeOverrun> announced_overrun(std::uint64_t announced, std::uint64_t expected,
                                             std::uint64_t max_size);

// The body grown to `total` bytes (resumed ones included), against the same: checked as bytes
// arrive, so that an endless body stops right after its size.
std::optional<SizeOverrun> body_overrun(std::uint64_t total, std::uint64_t expected,
                                        std::uint64_t max_size);

// The seconds a download of `size` bytes may take from its first attempt: deadline_s plus `size`
// at deadline_rate bytes/s (nothing more when deadline_rate is 0).
double deadline_seconds(const DownloadOptions& options, std::uint64_t size);

// "not finished after 10 min 2 s, its deadline (600 s plus ... at ... bytes/s; ...)".
std::string past_deadline_text(const DownloadOptions& options, std::uint64_t size, double spent);

// The bytes received over the last rate window of one attempt, sampled every 200 ms at most.
class RateWindow {
public:
    using Clock = std::chrono::steady_clock;
    // An attempt begins at `now` with nothing received.
    void restart(Clock::time_point now);
    // Records `received` (this attempt's bytes) at `now`; once a whole window is covered and the
    // rate over it is below options.min_rate, the words of the failure ("too slow: ..."). Nothing
    // when min_rate or rate_window_s is 0.
    std::optional<std::string> too_slow(Clock::time_point now, std::uint64_t received,
                                        const DownloadOptions& options);

private:
    std::deque<std::pair<Clock::time_point, std::uint64_t>> samples_; // (when, received)
};

} // namespace cvm::install
