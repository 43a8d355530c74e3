#include "platform/platform.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cwchar>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <io.h>
#include <shellapi.h>

#include "platform/windows_security.h"
#else
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include <unistd.h>
extern char** environ;
#endif

namespace cvm::platform {

#ifdef _WIN32

// FileMeta in the POSIX terms the trust checks read (see platform.h).
static void apply_security(const win::SecurityVerdict& v, FileMeta& m) {
    m.uid = !v.read ? FileMeta::kOtherOwner : v.owner_trusted ? 0 : win::account_uid(v.owner_sid);
    m.mode = !v.read || v.writable_by_others ? 0002 : 0;
    m.gid = v.writable_by_others ? win::writers_id(v.writer_sids) : 0; // who, for trusted_owners
}

std::wstring widen(const std::string& s) {
    if (s.empty()) return {};
    int n = MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    std::wstring w(static_cast<size_t>(n), L'\0');
    MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

std::string narrow(const std::wstring& w) {
    if (w.empty()) return {};
    int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0,
                                nullptr, nullptr);
    std::string s(static_cast<size_t>(n), '\0');
    WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr,
                        nullptr);
    return s;
}

const char* exe_suffix() { return ".exe"; }

std::optional<std::string> get_env(const std::string& name) {
    std::wstring wname = widen(name);
    // A set but empty variable also gives 0, without touching the last error.
    SetLastError(ERROR_SUCCESS);
    DWORD n = GetEnvironmentVariableW(wname.c_str(), nullptr, 0);
    if (n == 0) {
        if (GetLastError() == ERROR_ENVVAR_NOT_FOUND) return std::nullopt;
        return std::string();
    }
    std::wstring buf(n, L'\0');
    DWORD got = GetEnvironmentVariableW(wname.c_str(), buf.data(), n);
    buf.resize(got);
    return narrow(buf);
}

std::map<std::string, std::string> environment() {
    std::map<std::string, std::string> out;
    wchar_t* block = GetEnvironmentStringsW();
    if (!block) return out;
    for (wchar_t* p = block; *p; p += wcslen(p) + 1) {
        std::string entry = narrow(p);
        // Entries like "=C:=C:\\" describe drive folders; keep them as they are.
        size_t eq = entry.find('=', 1);
        if (eq == std::string::npos) continue;
        out[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    FreeEnvironmentStringsW(block);
    return out;
}

bool env_name_equal(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 32);
        if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 32);
        if (x != y) return false;
    }
    return true;
}

fs::path home_dir() {
    if (auto h = get_env("USERPROFILE")) return fs::u8path(*h);
    return fs::u8path(get_env("HOMEDRIVE").value_or("C:") + get_env("HOMEPATH").value_or("\\"));
}

fs::path user_data_dir() {
    if (auto v = get_env("LOCALAPPDATA"); v && !v->empty()) return fs::u8path(*v);
    return home_dir() / "AppData" / "Local";
}

fs::path user_config_dir() {
    if (auto v = get_env("APPDATA"); v && !v->empty()) return fs::u8path(*v);
    return home_dir() / "AppData" / "Roaming";
}

std::optional<fs::path> home_dir_if_any() { return home_dir(); }
std::optional<fs::path> user_config_dir_if_any() { return user_config_dir(); }

fs::path system_config_dir() {
    if (auto v = get_env("ProgramData"); v && !v->empty()) return fs::u8path(*v);
    return fs::u8path("C:\\ProgramData");
}

fs::path current_exe() {
    std::wstring buf(32768, L'\0');
    DWORD n = GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    buf.resize(n);
    return fs::path(buf);
}

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
    for (const auto& [k, v] : env) entries.push_back(widen(k) + L"=" + widen(v));
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

void set_env(const std::string& name, const std::optional<std::string>& value) {
    std::wstring v = value ? widen(*value) : std::wstring();
    SetEnvironmentVariableW(widen(name).c_str(), value ? v.c_str() : nullptr);
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

std::optional<std::string> capture_output(const fs::path& program,
                                          const std::vector<std::string>& args, int timeout_ms,
                                          bool with_stderr) {
    if (program.is_relative()) return std::nullopt; // never a program of the current folder
    SECURITY_ATTRIBUTES sa{sizeof(sa), nullptr, TRUE};
    HANDLE rd = nullptr, wr = nullptr;
    if (!CreatePipe(&rd, &wr, &sa, 0)) return std::nullopt;
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
        return std::nullopt;
    }
    std::string out;
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
                out.append(buf, got);
                continue;
            }
            if (GetTickCount64() >= deadline) {
                TerminateProcess(pi.hProcess, 1);
                WaitForSingleObject(pi.hProcess, INFINITE);
                CloseHandle(rd);
                CloseHandle(pi.hThread);
                CloseHandle(pi.hProcess);
                return std::nullopt;
            }
            Sleep(10);
        }
    } else {
        while (ReadFile(rd, buf, sizeof(buf), &got, nullptr) && got > 0) out.append(buf, got);
    }
    CloseHandle(rd);
    WaitForSingleObject(pi.hProcess, INFINITE);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    return out;
}

bool is_executable(const fs::path& p) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return false;
    std::string ext = p.extension().u8string();
    for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string pathext = get_env("PATHEXT").value_or(".COM;.EXE;.BAT;.CMD");
    for (auto& c : pathext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t start = 0;
    while (start <= pathext.size()) {
        size_t end = pathext.find(';', start);
        if (end == std::string::npos) end = pathext.size();
        if (!ext.empty() && pathext.compare(start, end - start, ext) == 0) return true;
        start = end + 1;
    }
    return false;
}

static std::optional<FileId> handle_id(const fs::path& p) {
    // FILE_FLAG_BACKUP_SEMANTICS lets folders open too; no access right is needed for the index.
    HANDLE h = CreateFileW(p.wstring().c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                           nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) return std::nullopt;
    BY_HANDLE_FILE_INFORMATION info;
    BOOL ok = GetFileInformationByHandle(h, &info);
    CloseHandle(h);
    if (!ok) return std::nullopt;
    FileId id;
    id.device = info.dwVolumeSerialNumber;
    id.inode = (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow;
    return id;
}

std::optional<FileId> file_id(const fs::path& p) { return handle_id(p); }

bool exists(const std::string& utf8_path) {
    return GetFileAttributesW(widen(utf8_path).c_str()) != INVALID_FILE_ATTRIBUTES;
}

std::vector<std::string> folder_names(const std::string& utf8_dir, FileMeta* meta) {
    std::vector<std::string> out;
    std::error_code ec;
    if (meta) {
        *meta = FileMeta{};
        if (fs::is_directory(fs::u8path(utf8_dir), ec)) {
            meta->type = FileMeta::Type::Directory;
            apply_security(win::security_of(widen(utf8_dir)), *meta);
        }
    }
    for (fs::directory_iterator it(fs::u8path(utf8_dir), ec), end; !ec && it != end; it.increment(ec))
        out.push_back(it->path().filename().u8string());
    return out;
}

std::optional<FileId> executable_id(const fs::path& p, FileMeta*) {
    if (!is_executable(p)) return std::nullopt;
    return handle_id(p);
}

// A directory junction needs no administrator rights, unlike a directory symlink. Returns 0, or
// the Windows error code.
static DWORD make_junction(const fs::path& target, const fs::path& link) {
    std::wstring absolute = fs::absolute(target).wstring();
    // A junction stores an NT path: \??\C:\... (an extended \\?\ prefix is the same thing).
    if (absolute.rfind(L"\\\\?\\", 0) == 0) absolute.erase(0, 4);
    if (!CreateDirectoryW(link.wstring().c_str(), nullptr)) return GetLastError();
    HANDLE h = CreateFileW(link.wstring().c_str(), GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD err = GetLastError();
        RemoveDirectoryW(link.wstring().c_str());
        return err;
    }
    std::wstring substitute = L"\\??\\" + absolute;
    const std::wstring& print = absolute;
    size_t sub_bytes = substitute.size() * sizeof(wchar_t);
    size_t print_bytes = print.size() * sizeof(wchar_t);
    std::vector<char> buf(8 + 8 + sub_bytes + 2 + print_bytes + 2, 0);
    auto put16 = [&](size_t off, size_t v) {
        buf[off] = static_cast<char>(v & 0xff);
        buf[off + 1] = static_cast<char>((v >> 8) & 0xff);
    };
    DWORD tag = IO_REPARSE_TAG_MOUNT_POINT;
    std::memcpy(buf.data(), &tag, 4);
    put16(4, buf.size() - 8);
    put16(8, 0);
    put16(10, sub_bytes);
    put16(12, sub_bytes + 2);
    put16(14, print_bytes);
    std::memcpy(buf.data() + 16, substitute.data(), sub_bytes);
    std::memcpy(buf.data() + 16 + sub_bytes + 2, print.data(), print_bytes);
    DWORD returned = 0;
    BOOL ok = DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, buf.data(), static_cast<DWORD>(buf.size()),
                              nullptr, 0, &returned, nullptr);
    DWORD err = ok ? 0 : GetLastError();
    CloseHandle(h);
    if (!ok) RemoveDirectoryW(link.wstring().c_str());
    return err;
}

// Where a volume has no reparse points (FAT, some network shares, Wine up to 8.x: "Function not
// implemented"), a folder is shown by a real folder tree whose files are hard links: still no
// copy and no administrator rights. Returns an empty string, or what failed.
static std::string link_tree(const fs::path& target, const fs::path& link) {
    std::error_code ec;
    fs::create_directory(link, ec);
    if (ec) return "cannot create " + link.u8string() + ": " + ec.message();
    for (fs::directory_iterator it(target, ec), end; !ec && it != end; it.increment(ec)) {
        fs::path to = link / it->path().filename();
        std::error_code kind_ec;
        if (it->is_directory(kind_ec)) {
            std::string error = link_tree(it->path(), to);
            if (!error.empty()) return error;
            continue;
        }
        std::error_code link_ec;
        fs::create_hard_link(it->path(), to, link_ec);
        if (link_ec)
            return "cannot hard-link " + to.u8string() + " to " + it->path().u8string() + ": " +
                   link_ec.message();
    }
    if (ec) return "cannot list " + target.u8string() + ": " + ec.message();
    return {};
}

void make_link(const fs::path& target, const fs::path& link, bool is_directory) {
    std::error_code ec;
    if (is_directory) {
        fs::create_directory_symlink(target, link, ec);
        if (!ec) return;
        DWORD junction_error = make_junction(target, link);
        if (junction_error == 0) return;
        std::string tree_error = link_tree(target, link);
        if (tree_error.empty()) return;
        throw std::runtime_error(
            "cannot link " + link.u8string() + " to " + target.u8string() + ": no symlink (" +
            ec.message() + "), no junction (Windows error " + std::to_string(junction_error) +
            "), " + tree_error + "; put CVM_ROOT on the same NTFS volume as the toolkit");
    }
    fs::create_symlink(target, link, ec);
    if (!ec) return;
    std::error_code hard_ec;
    fs::create_hard_link(target, link, hard_ec);
    if (!hard_ec) return;
    throw std::runtime_error("cannot link " + link.u8string() + " to " + target.u8string() +
                             ": no symlink (" + ec.message() + "), no hard link (" +
                             hard_ec.message() +
                             "); put CVM_ROOT on the same NTFS volume as the toolkit");
}

bool is_terminal(int fd) { return _isatty(fd) != 0; }

int terminal_columns(int fd) {
    if (!is_terminal(fd)) return 0;
    CONSOLE_SCREEN_BUFFER_INFO info;
    HANDLE h = GetStdHandle(fd == 2 ? STD_ERROR_HANDLE : STD_OUTPUT_HANDLE);
    if (!GetConsoleScreenBufferInfo(h, &info)) return 0;
    return info.srWindow.Right - info.srWindow.Left + 1;
}

FileLock::FileLock(FileLock&& other) noexcept : handle_(other.handle_) { other.handle_ = -1; }
FileLock& FileLock::operator=(FileLock&& other) noexcept {
    if (this != &other) {
        release();
        handle_ = other.handle_;
        other.handle_ = -1;
    }
    return *this;
}
FileLock::~FileLock() { release(); }

bool FileLock::acquire(const fs::path& path, bool try_only) {
    HANDLE h = CreateFileW(path.wstring().c_str(), GENERIC_READ | GENERIC_WRITE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                           OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE)
        throw std::runtime_error("cannot open lock file " + path.u8string());
    OVERLAPPED ov{};
    DWORD flags = LOCKFILE_EXCLUSIVE_LOCK | (try_only ? LOCKFILE_FAIL_IMMEDIATELY : 0);
    if (!LockFileEx(h, flags, 0, 1, 0, &ov)) {
        CloseHandle(h);
        if (try_only) return false;
        throw std::runtime_error("cannot lock " + path.u8string());
    }
    release();
    handle_ = reinterpret_cast<std::intptr_t>(h);
    return true;
}

void FileLock::release() {
    if (handle_ == -1) return;
    HANDLE h = reinterpret_cast<HANDLE>(handle_);
    OVERLAPPED ov{};
    UnlockFileEx(h, 0, 1, 0, &ov);
    CloseHandle(h);
    handle_ = -1;
}

std::uint64_t process_id() { return GetCurrentProcessId(); }

std::optional<std::string> parent_process_name() { return std::nullopt; }

void restrict_file_creation_mask() {} // Windows: access lists, not a mask

std::vector<std::string> utf8_args(int argc, char** argv) {
    int n = 0;
    LPWSTR* wargv = CommandLineToArgvW(GetCommandLineW(), &n);
    std::vector<std::string> out;
    if (!wargv) {
        for (int i = 0; i < argc; ++i) out.emplace_back(argv[i]);
        return out;
    }
    for (int i = 0; i < n; ++i) out.push_back(narrow(wargv[i]));
    LocalFree(wargv);
    return out;
}

#else // POSIX

static FileMeta meta_of(const struct stat& st) {
    FileMeta m;
    m.type = S_ISREG(st.st_mode) ? FileMeta::Type::Regular
             : S_ISDIR(st.st_mode) ? FileMeta::Type::Directory
                                   : FileMeta::Type::Other;
    m.uid = st.st_uid;
    m.gid = st.st_gid;
    m.mode = st.st_mode & 07777;
    return m;
}

const char* exe_suffix() { return ""; }

std::optional<std::string> get_env(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
}

std::map<std::string, std::string> environment() {
    std::map<std::string, std::string> out;
    for (char** e = environ; e && *e; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (!eq) continue;
        out.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
    }
    return out;
}

bool env_name_equal(const std::string& a, const std::string& b) { return a == b; }

std::optional<fs::path> home_dir_if_any() {
    if (auto h = get_env("HOME"); h && !h->empty() && h->front() == '/') return fs::path(*h);
    return std::nullopt;
}

fs::path home_dir() {
    if (auto h = home_dir_if_any()) return *h;
    auto h = get_env("HOME");
    if (h && !h->empty())
        throw HomeError("HOME is the relative path '" + *h + "', so cvm cannot find your home folder; "
                        "set HOME to its whole path, or set CVM_ROOT (and XDG_CONFIG_HOME)");
    throw HomeError("HOME is not set, so cvm cannot find your home folder; set HOME, or set CVM_ROOT "
                    "(and XDG_CONFIG_HOME)");
}

// $NAME when set to a whole path; nullopt when unset or empty; HomeError when relative (it would
// name a folder of wherever cvm runs, so a cloned project could hold the store or the config).
static std::optional<fs::path> absolute_variable(const char* name, const char* instead) {
    auto x = get_env(name);
    if (!x || x->empty()) return std::nullopt;
    if (x->front() != '/')
        throw HomeError(std::string(name) + " is the relative path '" + *x +
                        "'; set it to a whole path or unset it" + instead);
    return fs::path(*x);
}

std::optional<fs::path> user_config_dir_if_any() {
    if (auto x = absolute_variable("XDG_CONFIG_HOME", " (or set CVM_CONFIG)")) return *x;
    if (auto h = home_dir_if_any()) return *h / ".config";
    return std::nullopt;
}

fs::path user_data_dir() {
    if (auto x = absolute_variable("XDG_DATA_HOME", " (or set CVM_ROOT)")) return *x;
    return home_dir() / ".local" / "share";
}

fs::path user_config_dir() {
    if (auto x = absolute_variable("XDG_CONFIG_HOME", " (or set CVM_CONFIG)")) return *x;
    return home_dir() / ".config";
}

fs::path system_config_dir() { return fs::path("/etc"); }

fs::path current_exe() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : p;
}

static std::vector<char*> c_strings(std::vector<std::string>& storage) {
    std::vector<char*> out;
    out.reserve(storage.size() + 1);
    for (auto& s : storage) out.push_back(s.data());
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
    for (const auto& [k, v] : env) env_storage.push_back(k + "=" + v);
    auto argv = c_strings(argv_storage);
    auto envp = c_strings(env_storage);
    execve(program.c_str(), argv.data(), envp.data());
    int err = errno;
    std::fprintf(stderr, "cvm: cannot run %s: %s\n", program.c_str(), error_text(err).c_str());
    std::_Exit(err == ENOENT ? 127 : 126);
}

void set_env(const std::string& name, const std::optional<std::string>& value) {
    if (value)
        setenv(name.c_str(), value->c_str(), 1);
    else
        unsetenv(name.c_str());
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
        for (const auto& [k, v] : *env) env_storage.push_back(k + "=" + v);
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

std::optional<std::string> capture_output(const fs::path& program,
                                          const std::vector<std::string>& args, int timeout_ms,
                                          bool with_stderr) {
    if (program.is_relative()) return std::nullopt; // never a program of the current folder
    int fds[2];
    if (pipe(fds) != 0) return std::nullopt;
    std::vector<std::string> argv_storage = args;
    auto argv = c_strings(argv_storage);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return std::nullopt;
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
    std::string out;
    char buf[4096];
    ssize_t n;
    if (timeout_ms > 0) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (true) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd pfd{fds[0], POLLIN, 0};
            int ready = left.count() > 0 ? poll(&pfd, 1, static_cast<int>(left.count())) : 0;
            if (ready < 0 && errno == EINTR) continue;
            if (ready <= 0) {
                // Too slow (or poll failed): a hung interpreter must not hang cvm.
                kill(pid, SIGKILL);
                close(fds[0]);
                while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
                }
                return std::nullopt;
            }
            n = read(fds[0], buf, sizeof(buf));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            out.append(buf, static_cast<size_t>(n));
        }
    } else {
        while ((n = read(fds[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
            if (n > 0) out.append(buf, static_cast<size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 127) return std::nullopt;
    return out;
}

bool exists(const std::string& utf8_path) {
    struct stat st;
    return ::stat(utf8_path.c_str(), &st) == 0;
}

std::vector<std::string> folder_names(const std::string& utf8_dir, FileMeta* meta) {
    std::vector<std::string> out;
    if (meta) *meta = FileMeta{};
#ifdef __linux__
    // The shim lists store folders before every tool it runs: the folder's own descriptor is
    // read with getdents64 into a buffer on the stack (opendir would fstat it again and take a
    // 32 KiB buffer from the heap), and the owner check is on that same descriptor.
    int fd = ::open(utf8_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return out;
    struct stat st;
    if (meta && ::fstat(fd, &st) == 0) *meta = meta_of(st);
    struct Record { // the kernel's linux_dirent64
        std::uint64_t ino;
        std::int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
    };
    alignas(Record) char buf[8192];
    for (;;) {
        long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (long at = 0; at < n;) {
            const auto* e = reinterpret_cast<const Record*>(buf + at);
            at += e->reclen;
            const char* name = e->name;
            if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
            out.emplace_back(name);
        }
    }
    ::close(fd);
#else
    DIR* d = ::opendir(utf8_dir.c_str());
    if (!d) return out;
    struct stat st;
    if (meta && ::fstat(dirfd(d), &st) == 0) *meta = meta_of(st);
    while (const dirent* e = ::readdir(d)) {
        const char* n = e->d_name;
        if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
        out.emplace_back(n);
    }
    ::closedir(d);
#endif
    return out;
}

bool is_executable(const fs::path& p) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) return false;
    return S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

std::optional<FileId> file_id(const fs::path& p) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) return std::nullopt;
    return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

std::optional<FileId> executable_id(const fs::path& p, FileMeta* meta) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    if (meta) *meta = meta_of(st);
    // The mode bits answer for most files without a second system call; access() has the final
    // word (root, ACLs, noexec mounts are its business).
    if ((st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0 || access(p.c_str(), X_OK) != 0)
        return std::nullopt;
    return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

void make_link(const fs::path& target, const fs::path& link, bool is_directory) {
    std::error_code ec;
    if (is_directory)
        fs::create_directory_symlink(target, link, ec);
    else
        fs::create_symlink(target, link, ec);
    if (ec)
        throw std::runtime_error("cannot link " + link.string() + " to " + target.string() +
                                 ": " + ec.message());
}

bool is_terminal(int fd) { return isatty(fd) != 0; }

int terminal_columns(int fd) {
    winsize size{};
    if (!is_terminal(fd) || ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
    return size.ws_col;
}

FileLock::FileLock(FileLock&& other) noexcept : handle_(other.handle_) { other.handle_ = -1; }
FileLock& FileLock::operator=(FileLock&& other) noexcept {
    if (this != &other) {
        release();
        handle_ = other.handle_;
        other.handle_ = -1;
    }
    return *this;
}
FileLock::~FileLock() { release(); }

bool FileLock::acquire(const fs::path& path, bool try_only) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error("cannot open lock file " + path.string() + ": " +
                                 std::strerror(errno));
    int rc;
    while ((rc = flock(fd, LOCK_EX | (try_only ? LOCK_NB : 0))) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
        int err = errno;
        close(fd);
        if (try_only && err == EWOULDBLOCK) return false;
        throw std::runtime_error("cannot lock " + path.string() + ": " + std::strerror(err));
    }
    release();
    handle_ = fd;
    return true;
}

void FileLock::release() {
    if (handle_ == -1) return;
    close(static_cast<int>(handle_));
    handle_ = -1;
}

std::uint64_t process_id() { return static_cast<std::uint64_t>(getpid()); }

std::optional<std::string> parent_process_name() {
    auto text = read_file("/proc/" + std::to_string(getppid()) + "/comm", 256);
    if (!text) return std::nullopt;
    while (!text->empty() && (text->back() == '\n' || text->back() == '\r')) text->pop_back();
    if (text->empty()) return std::nullopt;
    return text;
}

std::vector<std::string> utf8_args(int argc, char** argv) {
    return std::vector<std::string>(argv, argv + argc);
}

#endif

#ifndef _WIN32
static FileRead read_file_posix(const char* path, std::size_t limit) {
    FileRead r;
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        r.error = errno;
        return r;
    }
    // The check is on the open descriptor, so what is read is what was checked.
    struct stat st;
    if (fstat(fd, &st) != 0) {
        r.error = errno;
        close(fd);
        return r;
    }
    r.meta = meta_of(st);
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return r;
    }
    std::string out;
    // procfs files report size 0; read on until the end either way.
    std::size_t want = std::min<std::size_t>(limit, st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1 : 4096);
    out.resize(want);
    std::size_t got = 0;
    while (got < limit) {
        if (got == out.size()) out.resize(std::min(limit, out.size() * 2));
        std::size_t asked = out.size() - got;
        ssize_t n = ::read(fd, out.data() + got, asked);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            r.error = errno; // EIO, EISDIR on odd file systems: not read
            close(fd);
            return r;
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
        // A regular file that gave all of its size and less than was asked is at its end: no
        // second call to learn what the first already said.
        if (st.st_size > 0 && got >= static_cast<std::size_t>(st.st_size) &&
            static_cast<std::size_t>(n) < asked)
            break;
    }
    close(fd);
    out.resize(got);
    r.text = std::move(out);
    return r;
}
#else
static FileRead read_file_windows(const fs::path& p, std::size_t limit) {
    FileRead r;
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
        r.error = ec.value() ? ec.value() : ENOENT;
        if (!fs::exists(st)) r.error = ENOENT;
        return r;
    }
    r.meta.type = fs::is_regular_file(st) ? FileMeta::Type::Regular
                  : fs::is_directory(st)  ? FileMeta::Type::Directory
                                          : FileMeta::Type::Other;
    if (r.meta.type != FileMeta::Type::Regular) {
        apply_security(win::security_of(p.wstring()), r.meta);
        return r;
    }
    // GENERIC_READ includes READ_CONTROL: the owner judged is the open file's.
    HANDLE h = CreateFileW(p.wstring().c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                           nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD e = GetLastError();
        r.error = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? ENOENT : EACCES;
        return r;
    }
    apply_security(win::security_of(h), r.meta);
    std::string out;
    char buf[8192];
    DWORD n = 0;
    while (out.size() < limit &&
           ReadFile(h, buf, static_cast<DWORD>(std::min(sizeof buf, limit - out.size())), &n, nullptr) && n > 0)
        out.append(buf, n);
    CloseHandle(h);
    r.text = std::move(out);
    return r;
}
#endif

bool FileRead::absent() const { return error == ENOENT || error == ENOTDIR; }

FileRead read_file_checked(const std::string& utf8_path, std::size_t limit) {
#ifdef _WIN32
    return read_file_windows(fs::u8path(utf8_path), limit);
#else
    return read_file_posix(utf8_path.c_str(), limit);
#endif
}

FileRead read_whole_file(const std::string& utf8_path, std::size_t limit) {
    FileRead r = read_file_checked(utf8_path, limit + 1);
    if (r.text && r.text->size() > limit) {
        r.text.reset();
        r.too_large = true;
    }
    return r;
}

std::optional<std::string> read_file(const std::string& utf8_path, std::size_t limit) {
    return read_file_checked(utf8_path, limit).text;
}

std::optional<std::string> read_file(const fs::path& p, std::size_t limit) {
#ifdef _WIN32
    return read_file_windows(p, limit).text;
#else
    return read_file_posix(p.c_str(), limit).text;
#endif
}

std::optional<FileMeta> file_meta(const fs::path& p, int* error) {
#ifdef _WIN32
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
        if (error) *error = ENOENT;
        return std::nullopt;
    }
    FileMeta m;
    m.type = fs::is_regular_file(st) ? FileMeta::Type::Regular
             : fs::is_directory(st)  ? FileMeta::Type::Directory
                                     : FileMeta::Type::Other;
    apply_security(win::security_of(p.wstring()), m);
    return m;
#else
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) {
        if (error) *error = errno;
        return std::nullopt;
    }
    return meta_of(st);
#endif
}

std::optional<FileMeta> link_meta(const fs::path& p, bool& link) {
    link = false;
#ifdef _WIN32
    return file_meta(p);
#else
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) return std::nullopt;
    link = S_ISLNK(st.st_mode);
    return meta_of(st);
#endif
}

// The C library's words differ between glibc, musl (the shim's, shims/CMakeLists.txt) and
// Windows' CRT ("Symbolic link loop" against "Too many levels of symbolic links"): the reasons
// cvm gives for files are its own, in glibc's wording, so cvm and its shim say the same thing.
std::string error_text(int error) {
    switch (error) {
    case EPERM: return "Operation not permitted";
    case ENOENT: return "No such file or directory";
    case EIO: return "Input/output error";
    case ENXIO: return "No such device or address";
    case ENOEXEC: return "Exec format error";
    case ENOMEM: return "Cannot allocate memory";
    case EACCES: return "Permission denied";
    case EBUSY: return "Device or resource busy";
    case EEXIST: return "File exists";
    case EXDEV: return "Invalid cross-device link";
    case ENOTDIR: return "Not a directory";
    case EISDIR: return "Is a directory";
    case EINVAL: return "Invalid argument";
    case ENFILE: return "Too many open files in system";
    case EMFILE: return "Too many open files";
    case ETXTBSY: return "Text file busy";
    case EFBIG: return "File too large";
    case ENOSPC: return "No space left on device";
    case EROFS: return "Read-only file system";
    case ENAMETOOLONG: return "File name too long";
    case ENOTEMPTY: return "Directory not empty";
    case ELOOP: return "Too many levels of symbolic links";
#ifdef EDQUOT
    case EDQUOT: return "Disk quota exceeded";
#endif
    default: return std::strerror(error);
    }
}

OwnerWriter windows_owner_writer(const fs::path& p) {
    OwnerWriter out;
#ifdef _WIN32
    win::SecurityVerdict v = win::security_of(p.wstring());
    if (!v.read) {
        out.owner = "an owner that cannot be read";
        return out;
    }
    out.owner = win::account_text(v.owner_sid);
    out.owner_sid = v.owner_sid;
    out.writer_sid = v.writer_sid;
    if (v.writable_by_others) out.writer = v.writer_sid.empty() ? "Everyone (the folder or file has no access list)"
                                                                : win::account_text(v.writer_sid);
#else
    (void)p;
#endif
    return out;
}

std::string file_type_text(const fs::path& p) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    switch (st.type()) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block:
    case fs::file_type::character: return "a device";
    case fs::file_type::regular: return "a regular file";
    default: return "not a regular file";
    }
}

std::uint32_t effective_uid() {
#ifdef _WIN32
    return 0;
#else
    static const std::uint32_t uid = static_cast<std::uint32_t>(geteuid()); // a system call each time otherwise
    return uid;
#endif
}

unsigned file_creation_mask() {
#ifdef _WIN32
    return 0;
#else
    static const unsigned mask = [] {
        // Linux tells it without changing it (/proc/self/status); elsewhere set and restore once.
        if (auto status = read_file(std::string("/proc/self/status"), 1 << 16)) {
            size_t at = status->find("\nUmask:");
            if (at != std::string::npos) return static_cast<unsigned>(std::strtoul(status->c_str() + at + 7, nullptr, 8));
        }
        mode_t old = umask(022);
        umask(old);
        return static_cast<unsigned>(old);
    }();
    return mask;
#endif
}

int create_file_for_writing(const fs::path& file) {
#ifdef _WIN32
    (void)file;
    return 0;
#else
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0) return errno;
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0) err = errno;
    else if (!S_ISREG(st.st_mode)) err = EINVAL;
    else if (fchmod(fd, 0644 & ~static_cast<mode_t>(file_creation_mask())) != 0) err = errno;
    close(fd);
    return err;
#endif
}

std::optional<std::uint32_t> sudo_uid() {
    if (effective_uid() != 0 || host_os() == Os::Windows) return std::nullopt;
    auto v = get_env("SUDO_UID");
    if (!v || v->empty() || v->size() > 9 || v->find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return static_cast<std::uint32_t>(std::stoul(*v));
}

void write_file_atomically(const fs::path& file, std::string_view text) {
    fs::path tmp = file.parent_path() /
                   fs::u8path("." + file.filename().u8string() + ".tmp" + std::to_string(process_id()));
    auto failed = [&](int err) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw fs::filesystem_error("cannot write", file, std::error_code(err, std::generic_category()));
    };
#ifdef _WIN32
    std::FILE* f = _wfopen(tmp.wstring().c_str(), L"wb");
    if (!f) failed(errno ? errno : EIO);
#else
    // A new file of cvm's own: never through a link or a FIFO someone put at the temporary name
    // (one left by an earlier run is removed: unlink takes the link, not what it points to).
    auto open_new = [&] {
        return ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    };
    int fd = open_new();
    if (fd < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0) fd = open_new();
    if (fd < 0) failed(errno ? errno : EIO);
    std::FILE* f = fdopen(fd, "wb");
    if (!f) {
        int err = errno;
        ::close(fd);
        failed(err ? err : EIO);
    }
#endif
    errno = 0;
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = std::fflush(f) == 0 && ok;
    int err = errno;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) failed(err ? err : (errno ? errno : EIO));
    std::error_code ec;
    fs::rename(tmp, file, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw fs::filesystem_error("cannot write", file, ec);
    }
}

fs::path self_path_for_identity() {
#ifdef _WIN32
    return current_exe();
#else
    // stat() follows this link to the running program without building its path (readlink does).
    return fs::path("/proc/self/exe");
#endif
}

} // namespace cvm::platform

namespace cvm::platform {

static fs::path find_in(const std::string& name, const std::string& path_list, bool absolute_only) {
    fs::path given = fs::u8path(name);
    std::vector<std::string> suffixes{""};
    if (host_os() == Os::Windows) {
        std::string pathext = get_env("PATHEXT").value_or(".COM;.EXE;.BAT;.CMD");
        size_t start = 0;
        while (start < pathext.size()) {
            size_t end = pathext.find(';', start);
            if (end == std::string::npos) end = pathext.size();
            if (end > start) suffixes.push_back(pathext.substr(start, end - start));
            start = end + 1;
        }
    }
    auto try_path = [&](const fs::path& base) -> fs::path {
        for (const auto& suffix : suffixes) {
            fs::path candidate = base;
            candidate += fs::u8path(suffix);
            if (is_executable(candidate)) return candidate;
        }
        return {};
    };
    if (given.has_parent_path()) return try_path(given);
    size_t start = 0;
    char sep = path_list_separator();
    while (start <= path_list.size()) {
        size_t end = path_list.find(sep, start);
        if (end == std::string::npos) end = path_list.size();
        std::string dir = path_list.substr(start, end - start);
        start = end + 1;
        if (dir.empty() || (absolute_only && fs::u8path(dir).is_relative())) continue;
        if (auto found = try_path(fs::u8path(dir) / given); !found.empty()) return found;
    }
    return {};
}

fs::path find_executable(const std::string& name, const std::string& path_list) {
    return find_in(name, path_list, false);
}

fs::path find_program(const std::string& name, const std::string& path_list) {
    return find_in(name, path_list, true);
}

std::optional<std::string> capture_python(const std::string& python, const std::string& program,
                                          int timeout_ms) {
    if (python.empty()) return std::nullopt;
    // -I: no current folder or script folder on sys.path, no PYTHON* variables, no user site.
    return capture_output(fs::u8path(python), {python, "-I", "-c", program}, timeout_ms);
}

} // namespace cvm::platform
