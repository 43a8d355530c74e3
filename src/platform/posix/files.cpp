// Files on POSIX (platform.h): reading with the check on the open descriptor, stat in trust's
// terms, folder listing for the shim's hot path, identities, links, locks.
#include "platform/platform.h"
#include "platform/posix/regular_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <system_error>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

namespace cvm::platform {

FileMeta meta_of_stat(const struct stat& st) {
    FileMeta m;
    m.type = S_ISREG(st.st_mode)   ? FileMeta::Type::Regular
             : S_ISDIR(st.st_mode) ? FileMeta::Type::Directory
                                   : FileMeta::Type::Other;
    m.uid = st.st_uid;
    m.gid = st.st_gid;
    m.mode = st.st_mode & 07777;
    return m;
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
    if (meta && ::fstat(fd, &st) == 0) *meta = meta_of_stat(st);
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
    if (meta && ::fstat(dirfd(d), &st) == 0) *meta = meta_of_stat(st);
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
    if (meta) *meta = meta_of_stat(st);
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
        throw std::runtime_error("cannot link " + link.string() + " to " + target.string() + ": " +
                                 ec.message());
}

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

// open(2) of an absolute path longer than the system's limit (ENAMETOOLONG), one folder at a
// time relative to the one before (links followed as open follows them); -1 with errno set.
static int open_long_path(const char* path, int flags) {
    if (path[0] != '/') {
        errno = ENAMETOOLONG;
        return -1;
    }
    int dir = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char* at = path;
    while (dir >= 0) {
        while (*at == '/')
            ++at;
        const char* end = std::strchr(at, '/');
        std::string part = end ? std::string(at, end) : std::string(at);
        bool last = !end || end[std::strspn(end, "/")] == '\0';
        int next = last ? ::openat(dir, part.c_str(), flags)
                        : ::openat(dir, part.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int error = errno;
        ::close(dir);
        errno = error;
        if (last || next < 0) return next;
        dir = next;
        at = end;
    }
    return -1;
}

static FileRead read_file_posix(const char* path, std::size_t limit) {
    FileRead r;
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENAMETOOLONG) fd = open_long_path(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    r.meta = meta_of_stat(st);
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return r;
    }
    std::string out;
    // procfs files report size 0; read on until the end either way.
    std::size_t want = std::min<std::size_t>(
        limit, st.st_size > 0 ? static_cast<std::size_t>(st.st_size) + 1 : 4096);
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

FileRead read_file_checked(const std::string& utf8_path, std::size_t limit) {
    return read_file_posix(utf8_path.c_str(), limit);
}

std::optional<std::string> read_file(const std::string& utf8_path, std::size_t limit) {
    return read_file_checked(utf8_path, limit).text;
}

std::optional<std::string> read_file(const fs::path& p, std::size_t limit) {
    return read_file_posix(p.c_str(), limit).text;
}

fs::path current_folder(std::error_code& ec) {
    ec.clear();
    fs::path cwd = fs::current_path(ec);
    if (!ec || (ec != std::errc::filename_too_long && ec != std::errc::result_out_of_range))
        return cwd;
    return current_folder_walked(ec);
}

fs::path current_folder_walked(std::error_code& ec) {
    // Up from ".", naming each folder by the entry of its parent with the same device and inode.
    ec.clear();
    std::vector<std::string> names;
    int fd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd >= 0) {
        struct stat here {}, up {};
        int parent = ::openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        bool ok = parent >= 0 && ::fstat(fd, &here) == 0 && ::fstat(parent, &up) == 0;
        ::close(fd);
        if (!ok) {
            if (parent >= 0) ::close(parent);
            break;
        }
        if (here.st_dev == up.st_dev && here.st_ino == up.st_ino) { // the root
            ::close(parent);
            std::string path;
            for (auto it = names.rbegin(); it != names.rend(); ++it)
                path += "/" + *it;
            return fs::path(path.empty() ? "/" : path);
        }
        int listing = ::dup(parent);
        DIR* d = listing >= 0 ? ::fdopendir(listing) : nullptr;
        if (!d && listing >= 0) ::close(listing);
        std::string found;
        while (d && found.empty()) {
            dirent* e = ::readdir(d);
            if (!e) break;
            std::string n = e->d_name;
            if (n == "." || n == "..") continue;
            struct stat st {};
            if (::fstatat(parent, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                st.st_dev == here.st_dev && st.st_ino == here.st_ino)
                found = n;
        }
        if (d) ::closedir(d);
        if (found.empty()) {
            ::close(parent);
            break;
        }
        names.push_back(found);
        fd = parent;
    }
    ec = std::make_error_code(std::errc::no_such_file_or_directory);
    return {};
}

std::optional<FileMeta> file_meta(const fs::path& p, int* error) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) {
        if (error) *error = errno;
        return std::nullopt;
    }
    return meta_of_stat(st);
}

ChangeStamp change_stamp(const fs::path& p) {
    ChangeStamp out;
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) {
        int e = errno;
        out.text = e == ENOENT || e == ENOTDIR ? "absent" : "error " + std::to_string(e);
        out.settled = true;
        return out;
    }
    auto ns = [](const struct timespec& t) {
        return static_cast<long long>(t.tv_sec) * 1000000000LL + static_cast<long long>(t.tv_nsec);
    };
#ifdef __APPLE__
    long long mtime = ns(st.st_mtimespec), ctime = ns(st.st_ctimespec);
#else
    long long mtime = ns(st.st_mtim), ctime = ns(st.st_ctim);
#endif
    out.text = std::to_string(static_cast<unsigned long long>(st.st_dev)) + " " +
               std::to_string(static_cast<unsigned long long>(st.st_ino)) + " " +
               std::to_string(static_cast<unsigned long>(st.st_mode)) + " " +
               std::to_string(st.st_uid) + " " + std::to_string(st.st_gid) + " " +
               std::to_string(static_cast<long long>(st.st_size)) + " " + std::to_string(mtime) +
               " " + std::to_string(ctime);
    out.meta = meta_of_stat(st);
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    long long newest = mtime > ctime ? mtime : ctime;
    out.settled = ns(now) - newest >= 2000000000LL;
    return out;
}

bool rewrite_in_place(const fs::path& file, std::string_view text) {
    int fd = ::open(file.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
              st.st_size == static_cast<off_t>(text.size()) &&
              ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
    ok = ::close(fd) == 0 && ok;
    return ok;
}

std::optional<FileMeta> link_meta(const fs::path& p, bool& link) {
    link = false;
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) return std::nullopt;
    link = S_ISLNK(st.st_mode);
    return meta_of_stat(st);
}

std::uint32_t effective_uid() {
    static const std::uint32_t uid =
        static_cast<std::uint32_t>(geteuid()); // a system call each time otherwise
    return uid;
}

int open_regular_file(const fs::path& path, int flags, int& fd) {
    fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0) return errno;
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = errno;
    else if (!S_ISREG(st.st_mode))
        err = EINVAL;
    if (err != 0) {
        ::close(fd);
        fd = -1;
    }
    return err;
}

int create_file_for_writing(const fs::path& file) {
    int fd = -1;
    if (int err =
            open_regular_file(file, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, fd))
        return err;
    int err = fchmod(fd, 0644 & ~static_cast<mode_t>(file_creation_mask())) != 0 ? errno : 0;
    close(fd);
    return err;
}

// A stdio stream writing to `fd`, which it then owns; nullptr with `error` (fd closed) if not.
static std::FILE* stream_of(int fd, int& error) {
    std::FILE* f = fdopen(fd, "wb");
    if (!f) {
        error = errno ? errno : EIO;
        ::close(fd);
    }
    return f;
}

// write_file_atomically's temporary file (files_detail.h): a new file of cvm's own, never through
// a link or a FIFO someone put at the temporary name (one left by an earlier run is removed:
// unlink takes the link, not what it points to).
std::FILE* open_new_file(const fs::path& tmp, int& error) {
    auto open_new = [&] {
        return ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    };
    int fd = open_new();
    if (fd < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0) fd = open_new();
    if (fd < 0) {
        error = errno ? errno : EIO;
        return nullptr;
    }
    return stream_of(fd, error);
}

std::FILE* open_existing_file(const fs::path& file, int& error) {
    int fd = ::open(file.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) {
        error = errno ? errno : EIO;
        ::close(fd);
        return nullptr;
    }
    // Opened without waiting for a FIFO's reader; written waiting as any writer does.
    int flags = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        error = errno ? errno : EIO;
        if (fd >= 0) ::close(fd);
        return nullptr;
    }
    return stream_of(fd, error);
}

fs::path self_path_for_identity() {
    // stat() follows this link to the running program without building its path (readlink does).
    return fs::path("/proc/self/exe");
}

} // namespace cvm::platform
