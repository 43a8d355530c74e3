// The limits of a transfer (download_limits.h): its size, its deadline, its rate.
#include "install/download_limits.h"

#include "install/progress.h"

namespace cvm::install {

namespace {

// Past the request's own size: not the file asked for.
SizeOverrun past_request_size(DownloadMismatch::Check check, std::uint64_t size,
                              std::uint64_t expected) {
    DownloadMismatch m;
    m.check = check;
    m.expected_size = expected;
    m.actual_size = size;
    return {m.describe("the manifest gives") +
                (check == DownloadMismatch::Check::SentSize ? "; stopped at once" : ""),
            m};
}

} // namespace

std::optional<SizeOverrun> announced_overrun(std::uint64_t announced, std::uint64_t expected,
                                             std::uint64_t max_size) {
    if (expected > 0 && announced > expected)
        return past_request_size(DownloadMismatch::Check::AnnouncedSize, announced, expected);
    if (expected == 0 && announced > max_size)
        return SizeOverrun{"the server announces " + bytes_text(announced) + ", more than " +
                               bytes_text(max_size) + " (CVM_DOWNLOAD_MAX_SIZE, download.max_size)",
                           std::nullopt};
    return std::nullopt;
}

std::optional<SizeOverrun> body_overrun(std::uint64_t total, std::uint64_t expected,
                                        std::uint64_t max_size) {
    if (expected > 0 && total > expected)
        return past_request_size(DownloadMismatch::Check::SentSize, total, expected);
    if (expected == 0 && total > max_size)
        return SizeOverrun{
            "the server sent more than " + bytes_text(max_size) +
                " without saying how much (CVM_DOWNLOAD_MAX_SIZE, download.max_size)",
            std::nullopt};
    return std::nullopt;
}

double deadline_seconds(const DownloadOptions& options, std::uint64_t size) {
    return static_cast<double>(options.deadline_s) +
           (options.deadline_rate > 0
                ? static_cast<double>(size) / static_cast<double>(options.deadline_rate)
                : 0.0);
}

std::string past_deadline_text(const DownloadOptions& options, std::uint64_t size, double spent) {
    return "not finished after " + Progress::format_duration(spent) + ", its deadline (" +
           std::to_string(options.deadline_s) + " s plus " + bytes_text(size) + " at " +
           std::to_string(options.deadline_rate) +
           " bytes/s; CVM_DOWNLOAD_DEADLINE, CVM_DOWNLOAD_DEADLINE_RATE)";
}

void RateWindow::restart(Clock::time_point now) {
    samples_.clear();
    samples_.emplace_back(now, 0);
}

std::optional<std::string> RateWindow::too_slow(Clock::time_point now, std::uint64_t received,
                                                const DownloadOptions& options) {
    if (options.min_rate == 0 || options.rate_window_s <= 0) return std::nullopt;
    const auto window = std::chrono::seconds(options.rate_window_s);
    if (samples_.empty() || now - samples_.back().first >= std::chrono::milliseconds(200))
        samples_.emplace_back(now, received);
    while (samples_.size() > 2 && now - samples_[1].first >= window)
        samples_.pop_front();
    if (now - samples_.front().first < window) return std::nullopt;
    double seconds = std::chrono::duration<double>(now - samples_.front().first).count();
    double rate = static_cast<double>(received - samples_.front().second) / seconds;
    if (rate >= static_cast<double>(options.min_rate)) return std::nullopt;
    return "too slow: " + std::to_string(static_cast<std::uint64_t>(rate)) +
           " bytes/s over the last " + std::to_string(options.rate_window_s) +
           " s, below the minimum " + std::to_string(options.min_rate) +
           " bytes/s (CVM_DOWNLOAD_MIN_RATE, CVM_DOWNLOAD_RATE_WINDOW)";
}

} // namespace cvm::install
