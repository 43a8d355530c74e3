// Starting and becoming programs on POSIX (platform.h): execve, run_process and capture_output
// with the user's own file-creation mask back; the terminal's width.
#include "platform/platform.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cvm::platform {

static std::vector<char*> c_strings(std::vector<std::string>& storage) {
    std::vector<char*> out;
    out.reserve(storage.size() + 1);
    for (auto& s : storage)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// The user's file-creation mask before restrict_file_creation_mask(), for the programs cvm runs
// or becomes (-1: never restricted).
static int user_creation_mask = -1;

void restrict_file_creation_mask() {
    mode_t old = umask(022);
    umask(old | 022);
    user_creation_mask = static_cast<int>(old);
}

static void restore_user_creation_mask() {
    if (user_creation_mask >= 0) umask(static_cast<mode_t>(user_creation_mask));
}

void exec_replace(const fs::path& program, const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& env) {
    restore_user_creation_mask();
    std::vector<std::string> argv_storage = args;
    std::vector<std::string> env_storage;
    env_storage.reserve(env.size());
    for (const auto& [k, v] : env)
        env_storage.push_back(k + "=" + v);
    auto argv = c_strings(argv_storage);
    auto envp = c_strings(env_storage);
    execve(program.c_str(), argv.data(), envp.data());
    int err = errno;
    std::fprintf(stderr, "cvm: cannot run %s: %s\n", program.c_str(), error_text(err).c_str());
    std::_Exit(err == ENOENT ? 127 : 126);
}

void exec_replace(const fs::path& program, const std::vector<std::string>& args) {
    restore_user_creation_mask();
    std::vector<std::string> argv_storage = args;
    auto argv = c_strings(argv_storage);
    execv(program.c_str(), argv.data());
    int err = errno;
    std::fprintf(stderr, "cvm: cannot run %s: %s\n", program.c_str(), error_text(err).c_str());
    std::_Exit(err == ENOENT ? 127 : 126);
}

int run_process(const fs::path& program, const std::vector<std::string>& args,
                const std::map<std::string, std::string>* env, std::string* error) {
    if (program.is_relative()) {
        if (error)
            *error = "cannot run " + program.u8string() +
                     ": a program of the current folder is never run";
        return -1;
    }
    std::vector<std::string> argv_storage = args;
    std::vector<std::string> env_storage;
    if (env)
        for (const auto& [k, v] : *env)
            env_storage.push_back(k + "=" + v);
    auto argv = c_strings(argv_storage);
    auto envp = c_strings(env_storage);
    int fds[2];
    if (pipe(fds) != 0) {
        if (error) *error = std::strerror(errno);
        return -1;
    }
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    pid_t pid = fork();
    if (pid < 0) {
        if (error) *error = std::strerror(errno);
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        // Started outside the current folder, which may be a cloned project: nothing there is
        // found as a module, a library (an empty LD_LIBRARY_PATH entry) or a file.
        if (chdir("/") != 0) _exit(127);
        restore_user_creation_mask();
        if (env)
            execve(program.c_str(), argv.data(), envp.data());
        else
            execv(program.c_str(), argv.data());
        int err = errno;
        ssize_t ignored = write(fds[1], &err, sizeof(err));
        (void)ignored;
        _exit(127);
    }
    close(fds[1]);
    int child_err = 0;
    ssize_t got = read(fds[0], &child_err, sizeof(child_err));
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got == static_cast<ssize_t>(sizeof(child_err))) {
        if (error) *error = "cannot run " + program.string() + ": " + std::strerror(child_err);
        return -1;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

Captured capture_process(const fs::path& program, const std::vector<std::string>& args, int timeout_ms,
                         bool with_stderr) {
    Captured result;
    if (program.is_relative()) return result; // never a program of the current folder
    int fds[2];
    if (pipe(fds) != 0) return result;
    std::vector<std::string> argv_storage = args;
    auto argv = c_strings(argv_storage);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return result;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        if (with_stderr) {
            dup2(fds[1], 2);
        } else {
            int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0) dup2(devnull, 2);
        }
        if (chdir("/") != 0) _exit(127); // as run_process: never in the current folder
        restore_user_creation_mask();
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    close(fds[1]);
    char buf[4096];
    ssize_t n;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
        if (timeout_ms > 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd pfd{fds[0], POLLIN, 0};
            int ready = left.count() > 0 ? poll(&pfd, 1, static_cast<int>(left.count())) : 0;
            if (ready < 0 && errno == EINTR) continue;
            if (ready <= 0) {
                // Too slow (or poll failed): a hung interpreter must not hang cvm.
                kill(pid, SIGKILL);
                close(fds[0]);
                while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
                }
                result.end = Captured::End::TimedOut;
                return result;
            }
        }
        n = read(fds[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        result.out.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        result.end = Captured::End::Signaled;
        result.code = WTERMSIG(status);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 127) {
        result.end = Captured::End::Exited;
        result.code = WEXITSTATUS(status);
    }
    return result;
}

std::optional<std::string> capture_output(const fs::path& program,
                                          const std::vector<std::string>& args, int timeout_ms,
                                          bool with_stderr) {
    Captured c = capture_process(program, args, timeout_ms, with_stderr);
    if (c.end != Captured::End::Exited) return std::nullopt;
    return std::move(c.out);
}

bool is_terminal(int fd) {
    return isatty(fd) != 0;
}

int terminal_columns(int fd) {
    winsize size{};
    if (!is_terminal(fd) || ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
    return size.ws_col;
}

unsigned file_creation_mask() {
    static const unsigned mask = [] {
        // Linux tells it without changing it (/proc/self/status); elsewhere set and restore once.
        if (auto status = read_file(std::string("/proc/self/status"), 1 << 16)) {
            size_t at = status->find("\nUmask:");
            if (at != std::string::npos)
                return static_cast<unsigned>(std::strtoul(status->c_str() + at + 7, nullptr, 8));
        }
        mode_t old = umask(022);
        umask(old);
        return static_cast<unsigned>(old);
    }();
    return mask;
}

} // namespace cvm::platform
