#include "platform/cleanup_on_signal.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#ifdef _WIN32
#include <io.h>
#include <wchar.h>
#else
#include <unistd.h>
#endif

namespace cvm::platform {

namespace {

#ifdef _WIN32
using PathChar = wchar_t;
constexpr std::size_t kPathMax = 1024;
#else
using PathChar = char;
constexpr std::size_t kPathMax = 4096;
#endif

enum : int { kFree = 0, kFilling = 1, kActive = 2 };

struct Slot {
    std::atomic<int> state{kFree};
    PathChar path[kPathMax];
};

Slot g_slots[kCleanupSlots];

void remove_registered() {
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kActive) {
#ifdef _WIN32
            _wunlink(s.path);
#else
            ::unlink(s.path);
#endif
        }
}

#ifdef _WIN32
// Windows runs the handler on its own thread; only SIGINT and SIGTERM exist.
const int kSignals[] = {SIGINT, SIGTERM};
void (*g_previous[2])(int) = {SIG_DFL, SIG_DFL};

void cleanup_signal_handler(int sig) {
    remove_registered();
    for (std::size_t i = 0; i < 2; ++i)
        if (kSignals[i] == sig) std::signal(sig, g_previous[i]);
    std::raise(sig);
}

void install_handlers() {
    for (std::size_t i = 0; i < 2; ++i) {
        auto old = std::signal(kSignals[i], cleanup_signal_handler);
        if (old == cleanup_signal_handler) continue;
        if (old == SIG_IGN || old == SIG_ERR) {
            std::signal(kSignals[i], old == SIG_ERR ? SIG_DFL : SIG_IGN);
            continue;
        }
        g_previous[i] = old;
    }
}
#else
const int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];

void cleanup_signal_handler(int sig) {
    int saved = errno;
    remove_registered();
    // The earlier disposition (default: die of the signal) takes it once this handler returns;
    // the signal is blocked while it runs, so it stays pending until then.
    for (std::size_t i = 0; i < 3; ++i)
        if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
    ::raise(sig);
    errno = saved;
}

void install_handlers() {
    for (std::size_t i = 0; i < 3; ++i) {
        struct sigaction now {
        }, old{};
        if (::sigaction(kSignals[i], nullptr, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == cleanup_signal_handler) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue; // nohup and friends: keep ignoring it
        g_previous[i] = old;
        now.sa_handler = cleanup_signal_handler;
        sigemptyset(&now.sa_mask);
        now.sa_flags = SA_RESTART;
        ::sigaction(kSignals[i], &now, nullptr);
    }
}
#endif

} // namespace

CleanupOnSignal& CleanupOnSignal::operator=(CleanupOnSignal&& other) noexcept {
    if (this != &other) {
        release();
        slot_ = other.slot_;
        other.slot_ = -1;
    }
    return *this;
}

void CleanupOnSignal::watch(const std::filesystem::path& path) {
    {
        // Checked at every call: code that set its own handler since (a test framework, a
        // library) is chained to, not lost.
        static std::mutex mutex;
        std::lock_guard<std::mutex> lock(mutex);
        install_handlers();
    }
    release();
    const auto& native = path.native();
    if (native.size() + 1 > kPathMax) return;
    for (int i = 0; i < kCleanupSlots; ++i) {
        int expected = kFree;
        if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
        std::memcpy(g_slots[i].path, native.c_str(), (native.size() + 1) * sizeof(PathChar));
        g_slots[i].state.store(kActive, std::memory_order_release);
        slot_ = i;
        return;
    }
}

void CleanupOnSignal::release() {
    if (slot_ < 0) return;
    g_slots[slot_].state.store(kFree, std::memory_order_release);
    slot_ = -1;
}

} // namespace cvm::platform
