// Starting programs on Windows (platform.h): exec_replace as start, wait and exit with the
// child's code, run_process, capture_output; the console's width.
#include "platform/platform.h"

#include <algorithm>
#include <stdexcept>
#include <system_error>

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <io.h>
#include <windows.h>

namespace cvm::platform {

// Quote one argument so that CommandLineToArgvW gives it back unchanged.
static std::wstring quote_arg(const std::wstring& arg) {
    if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) return arg;
    std::wstring out = L"\"";
    for (size_t i = 0;; ++i) {
        size_t backslashes = 0;
        while (i < arg.size() && arg[i] == L'\\') {
            ++i;
            ++backslashes;
        }
        if (i == arg.size()) {
            out.append(backslashes * 2, L'\\');
            break;
        }
        if (arg[i] == L'"') {
            out.append(backslashes * 2 + 1, L'\\');
            out.push_back(L'"');
        } else {
            out.append(backslashes, L'\\');
            out.push_back(arg[i]);
        }
    }
    out.push_back(L'"');
    return out;
}

static std::wstring env_block(const std::map<std::string, std::string>& env) {
    // CreateProcess wants the block sorted case-insensitively.
    std::vector<std::wstring> entries;
    for (const auto& [k, v] : env)
        entries.push_back(widen(k) + L"=" + widen(v));
    std::sort(entries.begin(), entries.end(), [](const std::wstring& a, const std::wstring& b) {
        return _wcsicmp(a.c_str(), b.c_str()) < 0;
    });
    std::wstring block;
    for (const auto& e : entries) {
        block += e;
        block.push_back(L'\0');
    }
    block.push_back(L'\0');
    return block;
}

static BOOL WINAPI ignore_ctrl(DWORD) {
    // Ctrl-C and Ctrl-Break reach every process of the console: the child gets the same event
    // and decides; the launcher stays alive to wait for it and return its exit code.
    return TRUE;
}

// How a program path can be handed to CreateProcessW. A path of MAX_PATH characters or more is
// refused even in a long-path-aware process; its short (8.3) form works where the volume has short
// names, with or without the \\?\ prefix (Wine takes it only with), and the \\?\ form of the long
// path is the last try.
static std::vector<std::wstring> launch_candidates(const fs::path& program) {
    std::wstring path = program.wstring();
    if (path.size() < MAX_PATH) return {path};
    std::vector<std::wstring> out;
    std::error_code ec;
    fs::path absolute = fs::absolute(program, ec);
    if (ec) return {path};
    absolute.make_preferred();
    std::wstring full = absolute.wstring();
    const std::wstring prefix = L"\\\\?\\";
    std::wstring extended = full.rfind(prefix, 0) == 0 ? full : prefix + full;
    DWORD n = GetShortPathNameW(extended.c_str(), nullptr, 0);
    if (n > 0) {
        std::wstring short_path(n, L'\0');
        n = GetShortPathNameW(extended.c_str(), short_path.data(), n);
        short_path.resize(n);
        if (short_path.rfind(prefix, 0) == 0) short_path.erase(0, prefix.size());
        if (!short_path.empty()) {
            out.push_back(short_path);
            out.push_back(prefix + short_path);
        }
    }
    out.push_back(extended);
    return out;
}

// Starts `program` (argv[0] on its command line is the form that started). Returns 0, or the
// Windows error of the first attempt.
static DWORD start_process(const fs::path& program, const std::vector<std::string>& args,
                           DWORD flags, wchar_t* env_block_or_null, STARTUPINFOW& si,
                           PROCESS_INFORMATION& pi, const wchar_t* cwd = nullptr) {
    std::wstring tail;
    for (size_t i = 1; i < args.size(); ++i)
        tail += L" " + quote_arg(widen(args[i]));
    DWORD first_error = 0;
    for (const auto& exe : launch_candidates(program)) {
        std::wstring shown = exe.rfind(L"\\\\?\\", 0) == 0 ? exe.substr(4) : exe;
        std::wstring cmd = quote_arg(shown) + tail;
        if (CreateProcessW(exe.c_str(), cmd.data(), nullptr, nullptr, TRUE, flags,
                           env_block_or_null, cwd, &si, &pi))
            return 0;
        if (first_error == 0) first_error = GetLastError();
    }
    return first_error == 0 ? ERROR_FILE_NOT_FOUND : first_error;
}

static std::string start_error(const fs::path& program, DWORD code) {
    return "cannot start " + program.u8string() + " (Windows error " + std::to_string(code) + ")";
}

// Starts, waits, and gives the child's 32-bit exit code (0xC000013A after a Ctrl-C, say).
// The folder a program cvm runs on its own account starts in: the system folder, never the
// current one (Windows looks there for DLLs, a python for modules).
static std::wstring neutral_folder() {
    wchar_t buf[MAX_PATH];
    UINT n = GetSystemDirectoryW(buf, MAX_PATH);
    return n > 0 && n < MAX_PATH ? std::wstring(buf, n) : std::wstring(L"C:\\Windows\\System32");
}

static bool run_and_wait(const fs::path& program, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>* env, DWORD& exit_code,
                         std::string* error, const wchar_t* cwd = nullptr) {
    STARTUPINFOW si{};
    si.cb = sizeof(si);
    PROCESS_INFORMATION pi{};
    std::wstring block;
    if (env) block = env_block(*env);
    // Installed before the child exists, so no Ctrl-C can end the launcher without the child.
    // A handler (unlike ignoring Ctrl-C with a null one) is not inherited by the child.
    SetConsoleCtrlHandler(ignore_ctrl, TRUE);
    DWORD err = start_process(program, args, CREATE_UNICODE_ENVIRONMENT,
                              env ? block.data() : nullptr, si, pi, cwd);
    if (err != 0) {
        SetConsoleCtrlHandler(ignore_ctrl, FALSE);
        if (error) *error = start_error(program, err);
        return false;
    }
    WaitForSingleObject(pi.hProcess, INFINITE);
    exit_code = 1;
    GetExitCodeProcess(pi.hProcess, &exit_code);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    SetConsoleCtrlHandler(ignore_ctrl, FALSE);
    return true;
}

int run_process(const fs::path& program, const std::vector<std::string>& args,
                const std::map<std::string, std::string>* env, std::string* error) {
    DWORD code = 0;
    if (program.is_relative()) {
        if (error)
            *error = "cannot run " + program.u8string() +
                     ": a program of the current folder is never run";
        return -1;
    }
    const std::wstring cwd = neutral_folder();
    if (!run_and_wait(program, args, env, code, error, cwd.c_str())) return -1;
    return static_cast<int>(code);
}

void exec_replace(const fs::path& program, const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& env) {
    std::string error;
    DWORD code = 0;
    if (!run_and_wait(program, args, &env, code, &error)) {
        std::fprintf(stderr, "cvm: %s\n", error.c_str());
        std::fflush(stderr);
        std::exit(126);
    }
    // All 32 bits of the child's code: an NTSTATUS after a crash or Ctrl-C is "negative" as an
    // int, and exit() hands the bits to ExitProcess unchanged.
    std::exit(static_cast<int>(code));
}

void exec_replace(const fs::path& program, const std::vector<std::string>& args) {
    std::string error;
    DWORD code = 0;
    if (!run_and_wait(program, args, nullptr, code, &error)) {
        std::fprintf(stderr, "cvm: %s\n", error.c_str());
        std::fflush(stderr);
        std::exit(126);
    }
    std::exit(static_cast<int>(code));
}

Captured capture_process(const fs::path& program, const std::vector<std::string>& args, int timeout_ms,
                         bool with_stderr) {
    Captured result;
    if (program.is_relative()) return result; // never a program of the current folder
    SECURITY_ATTRIBUTES sa{sizeof(sa), nullptr, TRUE};
    HANDLE rd = nullptr, wr = nullptr;
    if (!CreatePipe(&rd, &wr, &sa, 0)) return result;
    SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
    STARTUPINFOW si{};
    si.cb = sizeof(si);
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdOutput = wr;
    si.hStdError = with_stderr ? wr : GetStdHandle(STD_ERROR_HANDLE);
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    PROCESS_INFORMATION pi{};
    const std::wstring cwd = neutral_folder();
    DWORD err = start_process(program, args, 0, nullptr, si, pi, cwd.c_str());
    CloseHandle(wr);
    if (err != 0) {
        CloseHandle(rd);
        return result;
    }
    char buf[4096];
    DWORD got = 0;
    if (timeout_ms > 0) {
        // An anonymous pipe has no timed read: look before reading, until the deadline.
        ULONGLONG deadline = GetTickCount64() + static_cast<ULONGLONG>(timeout_ms);
        while (true) {
            DWORD avail = 0;
            if (!PeekNamedPipe(rd, nullptr, 0, nullptr, &avail, nullptr)) break; // writer gone
            if (avail > 0) {
                if (!ReadFile(rd, buf, sizeof(buf), &got, nullptr) || got == 0) break;
                result.out.append(buf, got);
                continue;
            }
            if (GetTickCount64() >= deadline) {
                TerminateProcess(pi.hProcess, 1);
                WaitForSingleObject(pi.hProcess, INFINITE);
                CloseHandle(rd);
                CloseHandle(pi.hThread);
                CloseHandle(pi.hProcess);
                result.end = Captured::End::TimedOut;
                return result;
            }
            Sleep(10);
        }
    } else {
        while (ReadFile(rd, buf, sizeof(buf), &got, nullptr) && got > 0)
            result.out.append(buf, got);
    }
    CloseHandle(rd);
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 0;
    GetExitCodeProcess(pi.hProcess, &code);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    result.end = Captured::End::Exited;
    result.code = static_cast<int>(code);
    return result;
}

std::optional<std::string> capture_output(const fs::path& program,
                                          const std::vector<std::string>& args, int timeout_ms,
                                          bool with_stderr) {
    Captured c = capture_process(program, args, timeout_ms, with_stderr);
    if (c.end == Captured::End::NotStarted || c.end == Captured::End::TimedOut) return std::nullopt;
    return std::move(c.out);
}

bool is_terminal(int fd) {
    return _isatty(fd) != 0;
}

int terminal_columns(int fd) {
    if (!is_terminal(fd)) return 0;
    CONSOLE_SCREEN_BUFFER_INFO info;
    HANDLE h = GetStdHandle(fd == 2 ? STD_ERROR_HANDLE : STD_OUTPUT_HANDLE);
    if (!GetConsoleScreenBufferInfo(h, &info)) return 0;
    return info.srWindow.Right - info.srWindow.Left + 1;
}

void restrict_file_creation_mask() {} // Windows: access lists, not a mask

unsigned file_creation_mask() {
    return 0;
}

} // namespace cvm::platform
