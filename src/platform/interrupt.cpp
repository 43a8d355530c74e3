#include "platform/interrupt.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace cvm::platform {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0}; // POSIX: the signal that arrived

struct Registry {
    std::mutex mutex;
    std::condition_variable emptied;
    std::multiset<fs::path> paths;
};

Registry& registry() {
    static Registry* r = new Registry; // never destroyed: a signal may come during exit
    return *r;
}

void remove_tree(const fs::path& p) {
    std::error_code ec;
    // Read-only folders from an archive: make them writable so their contents can go.
    for (auto it = fs::recursive_directory_iterator(p, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
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

// Lets the owners unwind for a moment, then removes what is left.
void clean_up_after_interrupt() {
    g_interrupted.store(true);
    Registry& r = registry();
    std::unique_lock<std::mutex> lock(r.mutex);
    r.emptied.wait_for(lock, std::chrono::seconds(2), [&] { return r.paths.empty(); });
    std::set<fs::path> left(r.paths.begin(), r.paths.end());
    lock.unlock();
    for (const auto& p : left)
        remove_tree(p);
}

#ifdef _WIN32

void end_by_signal(int) {}

BOOL WINAPI console_handler(DWORD event) {
    if (event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT || event == CTRL_CLOSE_EVENT) {
        clean_up_after_interrupt();
    }
    return FALSE; // the default handler then ends the process
}

void install_handlers() {
    SetConsoleCtrlHandler(console_handler, TRUE);
}

#else

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];
int g_pipe[2] = {-1, -1};

static void interrupt_signal_handler(int sig) {
    unsigned char byte = static_cast<unsigned char>(sig);
    ssize_t n = write(g_pipe[1], &byte, 1);
    (void)n;
}

// Ends the process as the signal would have: with the handler that was there before, or the
// default action.
void end_by_signal(int sig) {
    for (std::size_t i = 0; i < 3; ++i)
        if (kSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
    raise(sig);
    _exit(128 + sig); // the previous handler returned
}

// Runs the clean-up on an ordinary thread (a signal handler may not).
void watch_signals() {
    unsigned char byte = 0;
    while (read(g_pipe[0], &byte, 1) != 1) {
    }
    g_signal.store(byte);
    clean_up_after_interrupt();
    end_by_signal(byte);
}

void install_handlers() {
    if (pipe(g_pipe) != 0) return;
    for (std::size_t i = 0; i < 3; ++i) {
        struct sigaction sa {};
        sa.sa_handler = interrupt_signal_handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(kSignals[i], &sa, &g_previous[i]);
    }
    std::thread(watch_signals).detach();
}

#endif

} // namespace

void RemoveOnInterrupt::watch(const fs::path& path) {
    release();
    static std::once_flag once;
    std::call_once(once, install_handlers);
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    path_ = path;
    r.paths.insert(path_);
}

void RemoveOnInterrupt::release() {
    if (path_.empty()) return;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.paths.find(path_);
    if (it != r.paths.end()) r.paths.erase(it);
    path_.clear();
    if (!r.paths.empty()) return;
    r.emptied.notify_all();
    // The last owner unwound after an interrupt: end here, before it can exit another way.
    if (int sig = g_signal.load()) end_by_signal(sig);
}

bool interrupted() {
    return g_interrupted.load(std::memory_order_relaxed);
}

unsigned file_creation_mask() {
#ifdef _WIN32
    return 0;
#else
    static const unsigned mask = [] {
        // Linux tells it without changing it; elsewhere set and restore once, early.
        std::ifstream status("/proc/self/status");
        std::string line;
        while (std::getline(status, line))
            if (line.rfind("Umask:", 0) == 0) return static_cast<unsigned>(std::stoul(line.substr(6), nullptr, 8));
        mode_t old = umask(022);
        umask(old);
        return static_cast<unsigned>(old);
    }();
    return mask;
#endif
}

} // namespace cvm::platform
