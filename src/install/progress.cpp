#include "install/progress.h"

#include "platform/platform.h"

#include <algorithm>
#include <cmath>

namespace cvm::install {

namespace {
using Clock = std::chrono::steady_clock;

std::size_t terminal_width() {
    if (auto cols = platform::get_env("COLUMNS")) {
        try {
            int n = std::stoi(*cols);
            if (n >= 40 && n <= 1000) return static_cast<std::size_t>(n);
        } catch (...) {
        }
    }
    return 100;
}

std::string fit(const std::string& s, std::size_t width) {
    if (s.size() <= width) return s + std::string(width - s.size(), ' ');
    if (width < 4) return s.substr(0, width);
    return s.substr(0, width - 3) + "...";
}
} // namespace

Progress::Progress(bool terminal, bool silent, std::FILE* out)
    : terminal_(terminal), silent_(silent), out_(out) {}

std::unique_ptr<Progress> Progress::for_stderr() {
    auto mode = platform::get_env("CVM_PROGRESS");
    bool terminal = platform::is_terminal(2) && !(mode && *mode == "plain");
    return std::make_unique<Progress>(terminal, mode && *mode == "none");
}

Progress::~Progress() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (terminal_ && !silent_) draw_locked(true);
}

std::string Progress::format_bytes(std::uint64_t bytes) {
    char buf[32];
    double b = static_cast<double>(bytes);
    if (bytes < 1000)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else if (b < 1e6)
        std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
    else if (b < 1e9)
        std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
    return buf;
}

std::string Progress::format_duration(double seconds) {
    if (!(seconds >= 0) || seconds > 360000) return "--";
    long s = std::lround(seconds);
    char buf[32];
    if (s < 60)
        std::snprintf(buf, sizeof buf, "%lds", s);
    else if (s < 3600)
        std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
    return buf;
}

std::string Progress::bar_line(const std::string& label, std::uint64_t done, std::uint64_t total,
                               double rate, std::size_t width) {
    // The right part keeps one width whether or not the speed is known yet, so the bar does not
    // jump when it appears: "100% 861.0 MB/861.0 MB  12.3 MB/s ETA 1m02s", blanks until then.
    const auto pad = [](std::string t, std::size_t n) { return t.size() < n ? std::string(n - t.size(), ' ') + t : t; };
    std::string right;
    const std::string speed = rate > 0 ? format_bytes(static_cast<std::uint64_t>(rate)) + "/s" : "";
    if (total > 0) {
        double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
        char pct[8];
        std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(frac * 100));
        const std::string eta =
            rate > 0 ? "ETA " + format_duration(static_cast<double>(total - std::min(done, total)) / rate) : "";
        right = std::string(pct) + " " + pad(format_bytes(done) + "/" + format_bytes(total), 19) + " " +
                pad(speed, 11) + " " + pad(eta, 10);
    } else {
        right = pad(format_bytes(done), 9) + " " + pad(speed, 11);
    }
    std::size_t label_width = std::min<std::size_t>(40, width / 3);
    std::size_t bar_width =
        width > label_width + right.size() + 5 ? width - label_width - right.size() - 5 : 10;
    bar_width = std::min<std::size_t>(bar_width, 40);
    std::string bar(bar_width, ' ');
    if (total > 0) {
        std::size_t filled = static_cast<std::size_t>(
            std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) * bar_width);
        std::fill(bar.begin(), bar.begin() + static_cast<long>(filled), '#');
        if (filled < bar_width) std::fill(bar.begin() + static_cast<long>(filled), bar.end(), '-');
    }
    return fit(label, label_width) + " [" + bar + "] " + right;
}

int Progress::start(const std::string& action, const std::string& label, std::uint64_t total) {
    std::lock_guard<std::mutex> lock(mutex_);
    Item item;
    item.action = action;
    item.label = label;
    item.total = total;
    item.started = item.sample_time = Clock::now();
    items_.push_back(item);
    if (!silent_ && !terminal_) {
        std::fprintf(out_, "cvm: %s %s%s\n", action.c_str(), label.c_str(),
                     total ? (" (" + format_bytes(total) + ")").c_str() : "");
        std::fflush(out_);
    }
    return static_cast<int>(items_.size() - 1);
}

void Progress::update(int id, std::uint64_t done, std::uint64_t total) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (id < 0 || static_cast<std::size_t>(id) >= items_.size()) return;
    Item& item = items_[static_cast<std::size_t>(id)];
    item.done = done;
    if (total) item.total = total;
    auto now = Clock::now();
    double dt = std::chrono::duration<double>(now - item.sample_time).count();
    if (dt >= 0.5) {
        double instant = static_cast<double>(done - std::min(done, item.sample_done)) / dt;
        item.rate = item.rate == 0 ? instant : 0.7 * item.rate + 0.3 * instant;
        item.sample_time = now;
        item.sample_done = done;
    }
    if (terminal_ && !silent_) draw_locked(false);
}

void Progress::finish(int id, bool ok, const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (id < 0 || static_cast<std::size_t>(id) >= items_.size()) return;
    Item& item = items_[static_cast<std::size_t>(id)];
    if (!item.active) return;
    item.active = false;
    if (silent_) return;
    double seconds = std::chrono::duration<double>(Clock::now() - item.started).count();
    std::string line =
        ok ? item.action + " " + item.label + " done" : item.action + " " + item.label + " failed";
    if (ok && item.done > 0)
        line += " (" + format_bytes(item.done) + " in " + format_duration(seconds) + ")";
    if (!message.empty()) line += ": " + message;
    if (terminal_) clear_locked();
    std::fprintf(out_, "cvm: %s\n", line.c_str());
    if (terminal_) draw_locked(true);
    std::fflush(out_);
}

void Progress::message(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (silent_) return;
    if (terminal_) clear_locked();
    std::fprintf(out_, "cvm: %s\n", text.c_str());
    if (terminal_) draw_locked(true);
    std::fflush(out_);
}

void Progress::tick() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (terminal_ && !silent_) draw_locked(false);
}

void Progress::clear_locked() {
    for (std::size_t i = 0; i < drawn_lines_; ++i)
        std::fputs("\x1b[1A\x1b[2K", out_);
    drawn_lines_ = 0;
}

void Progress::draw_locked(bool force) {
    auto now = Clock::now();
    if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    clear_locked();
    std::size_t width = terminal_width() - 1;
    // One line per archive: its download while that runs, then its extraction (a streamed install
    // extracts an archive as it arrives: both items carry its name). Downloads first.
    const auto downloading = [](const Item& i) { return i.action == "downloading"; };
    std::vector<const Item*> lines;
    for (const bool first : {true, false})
        for (const auto& item : items_) {
            if (!item.active || downloading(item) != first) continue;
            const bool shown = std::any_of(lines.begin(), lines.end(),
                                           [&](const Item* l) { return l->label == item.label; });
            if (!shown) lines.push_back(&item);
        }
    for (const Item* item : lines) {
        std::fprintf(out_, "%s\n",
                     bar_line(item->action + " " + item->label, item->done, item->total, item->rate, width).c_str());
        ++drawn_lines_;
    }
    if (lines.size() > 1) {
        // The bytes fetched: the downloads where there are any (an archive's extraction counts
        // the same bytes again), else what is being read.
        const bool any_download = std::any_of(items_.begin(), items_.end(), downloading);
        std::uint64_t done = 0, total = 0;
        double rate = 0;
        for (const auto& item : items_) {
            if (any_download && !downloading(item)) continue;
            done += item.done;
            total += item.total;
            if (item.active) rate += item.rate;
        }
        std::fprintf(out_, "%s\n", bar_line("total", done, total, rate, width).c_str());
        ++drawn_lines_;
    }
    std::fflush(out_);
}

} // namespace cvm::install
