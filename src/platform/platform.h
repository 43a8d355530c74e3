#pragma once
// The only place that knows which operating system it runs on. Everything else in cvm is
// written against these functions, so the same code builds for Linux and Windows.
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#ifndef _WIN32
struct stat; // meta_of_stat
#endif

namespace cvm::platform {

namespace fs = std::filesystem;

enum class Os { Linux, Windows };

constexpr Os host_os() {
#ifdef _WIN32
    return Os::Windows;
#else
    return Os::Linux;
#endif
}

constexpr char path_list_separator(Os os = host_os()) {
    return os == Os::Windows ? ';' : ':';
}

// Executable suffix of the host ("" or ".exe").
const char* exe_suffix();

// Environment variable lookup (UTF-8). Empty values count as set.
std::optional<std::string> get_env(const std::string& name);

// A copy of the whole environment, names as the OS spells them.
std::map<std::string, std::string> environment();

// Environment names compare case-insensitively on Windows.
bool env_name_equal(const std::string& a, const std::string& b);

// The per-user data folder: $XDG_DATA_HOME, ~/.local/share; %LOCALAPPDATA% on Windows.
fs::path user_data_dir();
// Where per-user and machine-wide settings live: $XDG_CONFIG_HOME (~/.config) and /etc;
// %APPDATA% and %ProgramData% on Windows.
fs::path user_config_dir();
fs::path system_config_dir();
// $HOME; throws HomeError when it is unset, empty or relative (then no path can come from it).
fs::path home_dir();
// The same, nullopt instead of the error: for what is optional (the user's config file).
std::optional<fs::path> home_dir_if_any();
// $XDG_CONFIG_HOME, else ~/.config; nullopt when HOME cannot give it. A relative XDG_DATA_HOME
// or XDG_CONFIG_HOME throws HomeError (it would name a folder of wherever cvm runs).
std::optional<fs::path> user_config_dir_if_any();

class HomeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A regular file's bytes, at most `limit` of them; nullopt when it cannot be opened or is not a
// regular file (checked on the open descriptor). One open, an fstat and a read or two: it serves
// `cvm list` and the shim, which read many small files. Opened without blocking, so a FIFO
// answers at once (as not a regular file) instead of waiting for a writer.
std::optional<std::string> read_file(const fs::path& p, std::size_t limit = std::size_t(4) << 20);
// The same for a UTF-8 path in a string: no fs::path is built (for the shim's hot path).
std::optional<std::string> read_file(const std::string& utf8_path,
                                     std::size_t limit = std::size_t(4) << 20);

// Writes `text` to `file` atomically: a new temporary file beside it (never opened through a link),
// then a rename, which replaces a link or FIFO at `file` rather than writing through it. On failure
// the temporary file is removed and a std::filesystem::filesystem_error naming `file` (never the
// temporary name) is thrown, with the system's error code.
void write_file_atomically(const fs::path& file, std::string_view text);
// Whether two files hold the same bytes (the same size, then compared in blocks); false where
// either cannot be read.
bool same_bytes(const fs::path& a, const fs::path& b);
// Writes `text` over the bytes of `file` where it is already a regular file of this user of
// exactly that size (a stamp rewritten with the same text: its modification time moves, from the
// clock every file write takes). Opened never through a link and without waiting on a FIFO; no
// rename and no truncation, which on ext4 make the kernel write the file out at once (several
// milliseconds). False, having changed nothing, where that is not so (then write it atomically);
// always false on Windows.
bool rewrite_in_place(const fs::path& file, std::string_view text);
// Writes `text` to a file a user named for output (`cvm script -o FILE`, `cvm __man FILE`), never
// replacing what is not a regular file: a FIFO or a character device (/dev/null, a terminal),
// reached through links or not, is written to as it is, and so is what a link into /proc leads to
// (/dev/stderr, /proc/self/fd/N: such a link is an open file's, not a file of its own). Anything
// else goes to write_file_atomically (a link to a regular file is replaced by a new file). Callers
// refuse folders, block devices and sockets first (output_refusal). Throws as
// write_file_atomically does.
void write_output_file(const fs::path& file, std::string_view text);
// Why write_output_file must not write to `file`: "a folder", "a block device", "a socket"
// (links followed); empty when it may.
std::string output_refusal(const fs::path& file);

namespace win {
struct SecurityVerdict; // windows/security.h
}

// Who owns a file and who may write it: what the trust checks (config/trust.h) look at. On POSIX
// the stat's. On Windows the security descriptor, read once with the file and judged there
// (windows/security.h): `security` holds that verdict (owner and writers), and uid, gid and mode
// stay 0. Portable code asks file_doubt or the questions after it (owned_by_own...) rather than
// reading uid or mode itself.
struct FileMeta {
    enum class Type { Regular, Directory, Other };
    Type type = Type::Other;
    std::uint32_t uid = 0, gid = 0;                       // POSIX only
    std::uint32_t mode = 0;                               // permission bits, 07777; POSIX only
    std::shared_ptr<const win::SecurityVerdict> security; // Windows only
};
// read_file, telling why it read nothing: `error` is the open's errno (ENOENT, ENOTDIR: absent;
// EACCES, ELOOP, EISDIR...), else 0 and `meta` is the open descriptor's fstat (the file read is
// the file described); `text` is unset for a file that is not regular (a folder, a FIFO).
struct FileRead {
    std::optional<std::string> text;
    int error = 0;
    FileMeta meta;
    bool too_large = false; // read_whole_file: a regular file of more than `limit` bytes (no text)
    bool absent() const;    // ENOENT or ENOTDIR
};
FileRead read_file_checked(const std::string& utf8_path, std::size_t limit = std::size_t(4) << 20);
// read_file_checked for a file that is read whole or not at all (a lockfile, a config file): one
// of more than `limit` bytes has no text and `too_large` set, so that no part of it is taken for
// the whole.
FileRead read_whole_file(const std::string& utf8_path, std::size_t limit);
// stat() of a path (links followed); nullopt with `error` set when it fails.
std::optional<FileMeta> file_meta(const fs::path& p, int* error = nullptr);
#ifndef _WIN32
// The FileMeta of a stat the caller made (lstat, fstatat on an open folder). POSIX only.
FileMeta meta_of_stat(const struct stat& st);
#endif
// What a cache built from a file must compare to know the file unchanged (config/config_cache.h).
// On POSIX one stat (links followed): `text` is "<dev> <inode> <type and mode> <uid> <gid> <size>
// <mtime> <ctime>" (times in nanoseconds; a write, a rename over it, a chmod or chown changes the
// ctime, which no user can set back), "absent" for ENOENT/ENOTDIR, "error <errno>" for another
// failure; `meta` its FileMeta when it exists; `settled` when its times are at least two seconds
// old, so a later change cannot fall in the same clock tick. On Windows `text` is empty: no stamp
// is vouched for there, and callers read the file itself.
struct ChangeStamp {
    std::string text;
    std::optional<FileMeta> meta;
    bool settled = false;
};
ChangeStamp change_stamp(const fs::path& p);
// lstat() of a path (POSIX; `link` says whether it is a symlink, whose meta is then the link's);
// on Windows file_meta() with `link` false.
std::optional<FileMeta> link_meta(const fs::path& p, bool& link);
// The system's text for an errno value ("Permission denied").
std::string error_text(int error);
// The trust rules' question about a file (config/trust.h words the answer), answered by this OS's
// rules: on POSIX from the stat's owner and mode bits (owned by the user, root or, for root,
// SUDO_UID's user; not writable by everybody; writable by the group only for a listed owner or
// the user's private group), on Windows from the security descriptor read with the file (owned by
// the user, SYSTEM, Administrators, TrustedInstaller or a listed account; every other account
// that may change it listed, none that stands for anyone). `listed`: the ids of trusted_owners
// (listed_owner_id); nullptr to have `look_up` give them, called only for a file that is not
// plainly the user's or root's.
enum class FileDoubt { None, Owner, WorldWritable, GroupWritable };
FileDoubt file_doubt(const FileMeta& meta, const std::vector<std::uint32_t>* listed,
                     const std::vector<std::uint32_t>& (*look_up)());
// The id of an item of trusted_owners: on POSIX a number as it is, or a user /etc/passwd knows;
// on Windows a SID as text ("S-1-5-21-...-1001") or an account name ("CUDAADMIN",
// "DOMAIN\\builder") Windows resolves. nullopt for an account not known, and for a Windows
// account that stands for anyone (Everyone, Users...).
std::optional<std::uint32_t> listed_owner_id(const std::string& name);
// True when `uid` is the user cvm runs as, root, or (for root) SUDO_UID.
bool is_own_uid(std::uint32_t uid);
// Windows: who owns a file and which other account may change it, for messages ("BUILTIN\\Users
// (S-1-5-32-545)"), from the verdict in `meta` (no second read). With `look_up`, the writer named
// is the first that trusted_owners (as look_up gives them) does not list, where another comes
// first. Empty strings where nothing is wrong, and on POSIX.
struct OwnerWriter {
    std::string owner, writer;         // as above
    std::string owner_sid, writer_sid; // "S-1-5-7"
};
OwnerWriter owner_writer(const FileMeta& meta, const std::vector<std::uint32_t>& (*look_up)());
// The questions portable code asks about an owner and writers outside the whole rules above (a
// .cudaversion planted in /tmp, a link in a verified tree, a sticky folder on a store's path),
// answered on POSIX from the stat's owner and mode bits and on Windows from the verdict in
// `meta`. Owned by the user cvm acts for or the system (root, and for root SUDO_UID's user;
// SYSTEM, Administrators, TrustedInstaller):
bool owned_by_own(const FileMeta& meta);
// Owned by one of `listed` (the ids of trusted_owners, as listed_owner_id gives them):
bool owned_by_listed(const FileMeta& meta, const std::vector<std::uint32_t>& listed);
// Every other user may change it (mode 0002; on Windows another account may, or the descriptor
// cannot be read):
bool writable_by_others(const FileMeta& meta);
// A folder others may add to but whose entries only their owners may rename (the sticky bit of
// /tmp); none on Windows:
bool is_sticky_folder(const FileMeta& meta);
// `meta` with what others may write forgotten, so file_doubt judges its owner alone (a link's own
// mode means nothing; a sticky folder's write bits let others add entries, not rename ours).
FileMeta owner_only(const FileMeta& meta);
// What a type of file is called in messages: "a folder", "a FIFO", "a device"...
std::string file_type_text(const fs::path& p);

// The user cvm acts for (effective uid; 0 on Windows) and, when that is root through sudo, the
// user who ran sudo (SUDO_UID), whose files root trusts as git does.
std::uint32_t effective_uid();
std::optional<std::uint32_t> sudo_uid();
// The process's file-creation mask (umask on POSIX; 0 on Windows), read without changing it.
unsigned file_creation_mask();
// Adds 022 to the file-creation mask, for the whole run: whatever the user's umask (002, 000),
// nothing cvm creates (store folders, views, shims, caches, files) is writable by the group or
// by others. Called first thing by cvm, cvm-install and the shim; the programs cvm runs or
// becomes (exec_replace, run_process, capture_output) get the user's own mask back.
void restrict_file_creation_mask();
// Creates `file` if missing, readable by others per the umask and never writable by them,
// whatever the process's umask is at this instant (libarchive sets it to 0 for a moment while
// another thread extracts): 0600 at creation, then chmod. Returns the errno, 0 when it worked.
int create_file_for_writing(const fs::path& file);
// Accounts from /etc/passwd and /etc/group, read directly: the static shim may not use NSS.
// Empty / nullopt when not found there.
std::string user_name(std::uint32_t uid);
std::optional<std::uint32_t> user_id(const std::string& name);
// True when group `gid` is `uid`'s user private group: the user's primary group, of the user's
// own name, with no other members (Debian's default), where group-writable harms nobody.
bool is_private_group(std::uint32_t gid, std::uint32_t uid);

// Absolute path of the running executable.
fs::path current_exe();
// The current folder (std::filesystem::current_path), also where its path is longer than the
// system's limit (4096 bytes on Linux): there getcwd fails (musl, the shim's C library) and the
// path is put together by walking up with relative lookups. Empty, with `ec` set, when it cannot
// be found at all (the folder was removed).
fs::path current_folder(std::error_code& ec);
#ifndef _WIN32
// current_folder's walk up with relative lookups, whatever getcwd would say (for its tests).
fs::path current_folder_walked(std::error_code& ec);
#endif

// Replace the current process with `program` (Linux: execve). On Windows start it, wait, and
// exit with its code, forwarding Ctrl-C. Returns only on failure, with errno-style message set.
// `env` is the full environment for the child.
[[noreturn]] void exec_replace(const fs::path& program, const std::vector<std::string>& args,
                               const std::map<std::string, std::string>& env);

// Sets a variable of this process (nullopt removes it), for programs it starts or becomes.
void set_env(const std::string& name, const std::optional<std::string>& value);

// exec_replace with this process's own environment (after set_env): no copy of it is made,
// which the shim, run before every nvcc, notices.
[[noreturn]] void exec_replace(const fs::path& program, const std::vector<std::string>& args);

// Start `program` with `args`, wait, return its exit code (or -1 and message when it could not
// start). `env` empty means inherit.
int run_process(const fs::path& program, const std::vector<std::string>& args,
                const std::map<std::string, std::string>* env, std::string* error);

// Run and capture stdout (for `nvcc --version`). nullopt when it cannot start, or when `program`
// is a relative path (a program of the current folder, which may be a cloned project, is never
// run). The child starts in a neutral folder ("/"; Windows: the system folder), as does
// run_process's. With
// `timeout_ms` > 0, a program still running then is killed and nullopt returned (for programs
// found on the user's machine, such as a python that may hang). With `with_stderr`, stderr is
// captured with it (cl.exe prints its banner there); otherwise it is discarded (POSIX) or the
// caller's (Windows).
std::optional<std::string> capture_output(const fs::path& program,
                                          const std::vector<std::string>& args, int timeout_ms = 0,
                                          bool with_stderr = false);

// capture_output that tells how the program ended: it could not start, it ran past `timeout_ms`
// (killed), it was killed by a signal (Windows: a crash's NTSTATUS is an exit code), or it exited
// with `code`. `out` holds what it printed until then, in every case.
struct Captured {
    enum class End { NotStarted, TimedOut, Signaled, Exited } end = End::NotStarted;
    int code = 0; // the exit code, or the signal
    std::string out;
};
Captured capture_process(const fs::path& program, const std::vector<std::string>& args, int timeout_ms,
                         bool with_stderr);
// A signal's name for messages: "SIGSEGV", else "signal N".
std::string signal_name(int signal);

// True when the file is executable by the user (Windows: by PATHEXT suffix).
bool is_executable(const fs::path& p);

// Whether something exists at a UTF-8 path (links followed). For hot paths such as the shim's:
// no fs::path is built.
bool exists(const std::string& utf8_path);

// The names in a folder (UTF-8; no "." or ".."), unsorted; empty when it cannot be read. For hot
// paths: no fs::path or status per entry. `meta`, when given, gets the open folder's fstat
// (type Other when it could not be opened).
std::vector<std::string> folder_names(const std::string& utf8_dir, FileMeta* meta = nullptr);

// What makes a file the same file under any name: device and inode (Windows: volume serial and
// file index). Links are followed, so a symlink and its target compare equal; a copy does not.
struct FileId {
    std::uint64_t device = 0, inode = 0;
    bool operator==(const FileId& o) const { return device == o.device && inode == o.inode; }
    bool operator!=(const FileId& o) const { return !(*this == o); }
};
// A path whose file_id() is the running program's (Linux: /proc/self/exe, which stat follows
// without a readlink).
fs::path self_path_for_identity();
// The identity of `p`; nullopt when it does not exist.
std::optional<FileId> file_id(const fs::path& p);
// The identity of `p` when it is a regular file the user may execute (is_executable); nullopt
// otherwise. `meta`, when given, gets the same stat's owner and mode (POSIX; on Windows it stays
// Type::Other, and owners are read as trust.h reads them).
std::optional<FileId> executable_id(const fs::path& p, FileMeta* meta = nullptr);

// Create a link at `link` that shows `target`: a symlink where possible, else a hard link (files)
// or a junction (directories) on Windows. Never a copy.
void make_link(const fs::path& target, const fs::path& link, bool is_directory);

bool is_terminal(int fd);
// The width of the terminal `fd` shows; 0 when it is not a terminal or does not say.
int terminal_columns(int fd);

// An exclusive advisory lock on a file, held until destruction. Blocks unless try_only.
class FileLock {
public:
    FileLock() = default;
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    FileLock(FileLock&& other) noexcept;
    FileLock& operator=(FileLock&& other) noexcept;
    ~FileLock();
    // Returns false when try_only and someone else holds it. Throws on other errors.
    bool acquire(const fs::path& path, bool try_only = false);
    void release();
    bool held() const { return handle_ != invalid_handle(); }

private:
    static std::intptr_t invalid_handle() { return -1; }
    std::intptr_t handle_ = -1;
};

// Process id, for naming staging folders.
std::uint64_t process_id();
// The name of the program that started this one (Linux: /proc/<ppid>/comm); nullopt when
// unknown (Windows).
std::optional<std::string> parent_process_name();

// The calendar time of `t` in UTC (gmtime_r; gmtime_s on Windows).
std::tm utc_time(std::time_t t);

// UTF-8 argv for main (on Windows converts from the wide command line).
std::vector<std::string> utf8_args(int argc, char** argv);

#ifdef _WIN32
// UTF-8 <-> UTF-16 for the Windows API.
std::wstring widen(const std::string& s);
std::string narrow(const std::wstring& w);
#endif

} // namespace cvm::platform

namespace cvm::platform {
// The first executable called `name` in a PATH-style list (PATHEXT suffixes tried on Windows).
// A name with a folder part is returned as it is when executable. Empty path when none.
fs::path find_executable(const std::string& name, const std::string& path_list);
// The same for a program cvm runs on its own account (python, nvidia-smi): relative folders of
// the list (".", "bin") are skipped, so nothing of the current folder is found.
fs::path find_program(const std::string& name, const std::string& path_list);
// `python -I -c PROGRAM` (isolated: neither the current folder nor PYTHONPATH on sys.path, no
// user site), started outside the current folder; its stdout, or nullopt as capture_output.
std::optional<std::string> capture_python(const std::string& python, const std::string& program,
                                          int timeout_ms = 0);
} // namespace cvm::platform
