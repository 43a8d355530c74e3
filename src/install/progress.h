#pragma once
// Progress of downloads and extractions on stderr. On a terminal: one bar per active item and
// an overall line, with rate and ETA, redrawn in place. Elsewhere (logs, CI): one quiet line
// when an item starts and one when it ends.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cvm::install {

class Progress {
public:
    // `terminal`: draw bars (else quiet lines). `out` is normally stderr.
    explicit Progress(bool terminal, bool silent = false, std::FILE* out = stderr);
    // Bars when stderr is a terminal and CVM_PROGRESS is not "plain"; quiet lines otherwise;
    // nothing at all when CVM_PROGRESS is "none".
    static std::unique_ptr<Progress> for_stderr();
    ~Progress();

    // Starts an item ("downloading", "cudnn-...tar.xz", size or 0 when unknown); returns its id.
    int start(const std::string& action, const std::string& label, std::uint64_t total);
    void update(int id, std::uint64_t done, std::uint64_t total = 0);
    void finish(int id, bool ok, const std::string& message = "");
    // A line of text that does not disturb the bars.
    void message(const std::string& text);
    // Redraws if enough time passed (call from loops).
    void tick();

    // "1.5 MB", "860.9 MB", "2.1 GB"
    static std::string format_bytes(std::uint64_t bytes);
    // "45s", "1m02s", "1h03m"
    static std::string format_duration(double seconds);
    // One bar line as drawn for a terminal of `width` columns.
    static std::string bar_line(const std::string& label, std::uint64_t done, std::uint64_t total,
                                double rate, std::size_t width);

private:
    struct Item {
        std::string action, label;
        std::uint64_t done = 0, total = 0;
        bool active = true;
        std::chrono::steady_clock::time_point started, sample_time;
        std::uint64_t sample_done = 0;
        double rate = 0; // bytes per second, smoothed
    };
    void draw_locked(bool force);
    void clear_locked();

    bool terminal_;
    bool silent_ = false;
    std::FILE* out_;
    std::mutex mutex_;
    std::vector<Item> items_;
    std::size_t drawn_lines_ = 0;
    std::chrono::steady_clock::time_point last_draw_{};
};

} // namespace cvm::install
