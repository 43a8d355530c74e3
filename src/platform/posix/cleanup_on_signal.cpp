// The POSIX half of the signal clean-up registry (cleanup_detail.h): handlers for SIGINT, SIGTERM
// and SIGHUP chained to the earlier ones, a watcher thread that removes folders, fork hooks.
#include <cerrno>
#include <csignal>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "platform/cleanup_detail.h"

namespace cvm::platform::cleanup {

namespace {

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
    for (int s : kSignals)
        sigaddset(&block, s);
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
void prepare_fork() {
    g_mutex.lock();
}
void after_fork_parent() {
    g_mutex.unlock();
}
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

std::once_flag g_fork_hooks;

} // namespace

void arm(Removal what) {
    std::call_once(g_fork_hooks,
                   [] { pthread_atfork(prepare_fork, after_fork_parent, after_fork_child); });
    std::lock_guard<std::mutex> lock(g_mutex);
    install_handlers();
    if (what == Removal::Tree) start_watcher();
}

void unlink_path(const PathChar* path) {
    ::unlink(path);
}

bool registered_here() {
    return g_owner.load() == ::getpid();
}

// Ends the process as the signal would have (from an ordinary thread).
void end_by_signal(int sig) {
    end_by_signal_posix(sig);
}

} // namespace cvm::platform::cleanup
