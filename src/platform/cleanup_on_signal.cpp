#include "platform/cleanup_on_signal.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <wchar.h>
#else
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#endif

namespace cvm::platform {

namespace fs = std::filesystem;

namespace {

#ifdef _WIN32
using PathChar = wchar_t;
constexpr std::size_t kPathMax = 2048;
#else
using PathChar = char;
constexpr std::size_t kPathMax = 4096;
#endif

enum : int { kFree = 0, kFilling = 1, kActive = 2 };

// A slot is claimed (kFree -> kFilling) with a compare-exchange, filled, then published
// (kActive); the handler reads only published slots.
struct Slot {
    std::atomic<int> state{kFree};
    Removal what = Removal::File;
    PathChar path[kPathMax];
};

Slot g_slots[kCleanupSlots];
std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0}; // the stopping signal that arrived (SIGINT for a console event)

bool any_active(Removal what) {
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kActive && s.what == what) return true;
    return false;
}

// Async-signal-safe: unlink only.
void unlink_files() {
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kActive && s.what == Removal::File) {
#ifdef _WIN32
            _wunlink(s.path);
#else
            ::unlink(s.path);
#endif
        }
}

void remove_tree(const fs::path& p) {
    std::error_code ec;
    // Read-only folders from an archive: make them writable so their contents can go.
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_directory(ec) && !it->is_symlink(ec))
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    // Other threads may still create files in it for a moment: try a few times.
    for (int attempt = 0; attempt < 5; ++attempt) {
        ec.clear();
        fs::remove_all(p, ec);
        if (!ec && !fs::exists(fs::symlink_status(p, ec))) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// On an ordinary thread after a signal: lets the owners unwind for a moment, then removes what
// is still registered.
void clean_up_after_interrupt() {
    unlink_files();
    for (int i = 0; i < 200 && any_active(Removal::Tree); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    unlink_files();
    for (Slot& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kActive && s.what == Removal::Tree) {
            PathChar copy[kPathMax];
            std::memcpy(copy, s.path, sizeof copy);
            copy[kPathMax - 1] = 0;
            if (s.state.load(std::memory_order_acquire) == kActive) remove_tree(fs::path(copy));
        }
}

#ifdef _WIN32

// Windows runs console handlers on a thread of their own: the whole clean-up happens there, then
// the default handler ends the process.
BOOL WINAPI on_console_event(DWORD event) {
    if (event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT || event == CTRL_CLOSE_EVENT) {
        g_signal.store(SIGINT);
        g_interrupted.store(true);
        clean_up_after_interrupt();
    }
    return FALSE;
}

void install_handlers() {
    static std::once_flag once;
    std::call_once(once, [] { SetConsoleCtrlHandler(on_console_event, TRUE); });
}

void start_watcher() {}
void end_by_signal(int) {} // the console handler's return ends the process

#else

const int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];
// The process whose registrations the slots hold, and the one the watcher thread runs in: a
// child of fork() is neither until it registers something itself.
std::atomic<pid_t> g_owner{0};
std::atomic<pid_t> g_watcher{0};
int g_pipe[2] = {-1, -1};
std::mutex g_mutex; // handler installation and the watcher's start

// Hands the signal to the disposition that was there before cvm's. Called from the handler, the
// signal is blocked until it returns, so the earlier disposition takes it then.
void pass_on(int sig) {
    for (std::size_t i = 0; i < 3; ++i)
        if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
    ::raise(sig);
}

void on_signal(int sig) {
    int saved = errno;
    const pid_t self = ::getpid();
    if (g_owner.load() == self) {
        g_signal.store(sig);
        g_interrupted.store(true);
        unlink_files();
        if (g_watcher.load() == self && any_active(Removal::Tree)) {
            // Folders to remove: the watcher does it, then ends the process.
            unsigned char byte = static_cast<unsigned char>(sig);
            (void)!::write(g_pipe[1], &byte, 1);
            errno = saved;
            return;
        }
    }
    pass_on(sig);
    errno = saved;
}

// Ends the process as the signal would have (from an ordinary thread).
[[noreturn]] void end_by_signal_posix(int sig) {
    for (std::size_t i = 0; i < 3; ++i)
        if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig); // the earlier handler returned
}
void end_by_signal(int sig) { end_by_signal_posix(sig); }

void watch_signals(int fd) {
    unsigned char byte = 0;
    while (::read(fd, &byte, 1) != 1) {
        if (errno != EINTR) return;
    }
    clean_up_after_interrupt();
    end_by_signal_posix(byte);
}

// Called with g_mutex held.
void start_watcher() {
    const pid_t self = ::getpid();
    if (g_watcher.load() == self) return;
    if (::pipe2(g_pipe, O_CLOEXEC) != 0) return;
    // Stopping signals are blocked in the watcher so the handler runs on the other threads.
    sigset_t block, old;
    sigemptyset(&block);
    for (int s : kSignals) sigaddset(&block, s);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    std::thread(watch_signals, g_pipe[0]).detach();
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    g_watcher.store(self);
}

// Called with g_mutex held; at every registration, so a handler set since (a test framework,
// a library) is chained to, not lost.
void install_handlers() {
    g_owner.store(::getpid());
    for (std::size_t i = 0; i < 3; ++i) {
        struct sigaction now {
        }, old{};
        if (::sigaction(kSignals[i], nullptr, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == on_signal) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) {
            if (kSignals[i] == SIGHUP) continue; // nohup: keep ignoring
            // SIGINT and SIGTERM ignored from the start (a shell's background job): an explicit
            // kill still stops cvm, cleanly, by the default action.
            old.sa_handler = SIG_DFL;
        }
        g_previous[i] = old;
        now.sa_handler = on_signal;
        sigemptyset(&now.sa_mask);
        now.sa_flags = SA_RESTART;
        ::sigaction(kSignals[i], &now, nullptr);
    }
}

// A child of fork() starts with an empty registry: its parent's paths are the parent's, and the
// watcher thread did not come along.
void prepare_fork() { g_mutex.lock(); }
void after_fork_parent() { g_mutex.unlock(); }
void after_fork_child() {
    for (Slot& s : g_slots)
        s.state.store(kFree, std::memory_order_relaxed);
    g_owner.store(0);
    g_watcher.store(0);
    g_signal.store(0);
    g_interrupted.store(false);
    if (g_pipe[0] >= 0) {
        ::close(g_pipe[0]);
        ::close(g_pipe[1]);
        g_pipe[0] = g_pipe[1] = -1;
    }
    g_mutex.unlock();
}

#endif

std::once_flag g_fork_hooks;

} // namespace

CleanupOnSignal& CleanupOnSignal::operator=(CleanupOnSignal&& other) noexcept {
    if (this != &other) {
        release();
        slot_ = other.slot_;
        other.slot_ = -1;
    }
    return *this;
}

void CleanupOnSignal::watch(const fs::path& path, Removal what) {
#ifndef _WIN32
    std::call_once(g_fork_hooks, [] { pthread_atfork(prepare_fork, after_fork_parent, after_fork_child); });
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        install_handlers();
        if (what == Removal::Tree) start_watcher();
    }
#else
    (void)g_fork_hooks;
    install_handlers();
    start_watcher();
#endif
    release();
    const auto& native = path.native();
    if (native.size() + 1 > kPathMax) return;
    for (int i = 0; i < kCleanupSlots; ++i) {
        int expected = kFree;
        if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
        g_slots[i].what = what;
        std::memcpy(g_slots[i].path, native.c_str(), (native.size() + 1) * sizeof(PathChar));
        g_slots[i].state.store(kActive, std::memory_order_release);
        slot_ = i;
        return;
    }
}

void CleanupOnSignal::release() {
    if (slot_ < 0) return;
    const Removal what = g_slots[slot_].what;
    g_slots[slot_].state.store(kFree, std::memory_order_release);
    slot_ = -1;
    // The last folder's owner unwound after an interrupt: end here, by that signal, before the
    // program can exit another way.
    if (what == Removal::Tree && g_signal.load() != 0 && !any_active(Removal::Tree)) {
#ifndef _WIN32
        if (g_owner.load() != ::getpid()) return;
#endif
        end_by_signal(g_signal.load());
    }
}

bool interrupted() { return g_interrupted.load(std::memory_order_relaxed); }

} // namespace cvm::platform
