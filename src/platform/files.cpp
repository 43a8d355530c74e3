// The file helpers that read the same on every OS (platform.h): whole-file reads, the C library's
// words for errno, atomic writes over the OS's own new-file open, the lock's moves.
#include "platform/platform.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>
#include <vector>

#include "platform/files_detail.h"

namespace cvm::platform {

bool same_bytes(const fs::path& a, const fs::path& b) {
    std::error_code ec1, ec2;
    if (fs::file_size(a, ec1) != fs::file_size(b, ec2) || ec1 || ec2) return false;
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    if (!fa || !fb) return false;
    std::vector<char> ba(1 << 16), bb(1 << 16);
    while (fa && fb) {
        fa.read(ba.data(), static_cast<std::streamsize>(ba.size()));
        fb.read(bb.data(), static_cast<std::streamsize>(bb.size()));
        if (fa.gcount() != fb.gcount() || !std::equal(ba.begin(), ba.begin() + fa.gcount(), bb.begin()))
            return false;
    }
    return fa.eof() && fb.eof();
}

bool FileRead::absent() const {
    return error == ENOENT || error == ENOTDIR;
}

FileRead read_whole_file(const std::string& utf8_path, std::size_t limit) {
    FileRead r = read_file_checked(utf8_path, limit + 1);
    if (r.text && r.text->size() > limit) {
        r.text.reset();
        r.too_large = true;
    }
    return r;
}

// The C library's words differ between glibc, musl (the shim's, shims/CMakeLists.txt) and
// Windows' CRT ("Symbolic link loop" against "Too many levels of symbolic links"): the reasons
// cvm gives for files are its own, in glibc's wording, so cvm and its shim say the same thing.
std::string error_text(int error) {
    switch (error) {
    case EPERM:
        return "Operation not permitted";
    case ENOENT:
        return "No such file or directory";
    case EIO:
        return "Input/output error";
    case ENXIO:
        return "No such device or address";
    case ENOEXEC:
        return "Exec format error";
    case ENOMEM:
        return "Cannot allocate memory";
    case EACCES:
        return "Permission denied";
    case EBUSY:
        return "Device or resource busy";
    case EEXIST:
        return "File exists";
    case EXDEV:
        return "Invalid cross-device link";
    case ENOTDIR:
        return "Not a directory";
    case EISDIR:
        return "Is a directory";
    case EINVAL:
        return "Invalid argument";
    case ENFILE:
        return "Too many open files in system";
    case EMFILE:
        return "Too many open files";
    case ETXTBSY:
        return "Text file busy";
    case EFBIG:
        return "File too large";
    case ENOSPC:
        return "No space left on device";
    case EROFS:
        return "Read-only file system";
    case ENAMETOOLONG:
        return "File name too long";
    case ENOTEMPTY:
        return "Directory not empty";
    case ELOOP:
        return "Too many levels of symbolic links";
#ifdef EDQUOT
    case EDQUOT:
        return "Disk quota exceeded";
#endif
    default:
        return std::strerror(error);
    }
}

std::string file_type_text(const fs::path& p) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    switch (st.type()) {
    case fs::file_type::directory:
        return "a folder";
    case fs::file_type::fifo:
        return "a FIFO";
    case fs::file_type::socket:
        return "a socket";
    case fs::file_type::block:
    case fs::file_type::character:
        return "a device";
    case fs::file_type::regular:
        return "a regular file";
    default:
        return "not a regular file";
    }
}

void write_file_atomically(const fs::path& file, std::string_view text) {
    fs::path tmp = file.parent_path() / fs::u8path("." + file.filename().u8string() + ".tmp" +
                                                   std::to_string(process_id()));
    auto failed = [&](int err) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw fs::filesystem_error("cannot write", file,
                                   std::error_code(err, std::generic_category()));
    };
    int open_error = 0;
    std::FILE* f = open_new_file(tmp, open_error);
    if (!f) failed(open_error);
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

namespace {

// Whether `file`, or a link on the way from it to what it names, lies in /proc (Linux): /dev/stdout
// -> /proc/self/fd/1, /dev/fd/2 (whose folder is /proc/self/fd).
bool reached_through_proc(fs::path p) {
    if (host_os() != Os::Linux) return false;
    for (int hops = 0; hops < 40; ++hops) {
        std::error_code ec;
        fs::path folder = fs::weakly_canonical(fs::absolute(p, ec).parent_path(), ec);
        if (ec) return false;
        auto part = folder.begin();
        if (part != folder.end() && *part == "/" && ++part != folder.end() && *part == "proc")
            return true;
        if (!fs::is_symlink(fs::symlink_status(p, ec))) return false;
        fs::path next = fs::read_symlink(p, ec);
        if (ec) return false;
        p = next.is_absolute() ? next : p.parent_path() / next;
    }
    return false;
}

} // namespace

std::string output_refusal(const fs::path& file) {
    std::error_code ec;
    switch (fs::status(file, ec).type()) {
    case fs::file_type::directory:
        return "a folder";
    case fs::file_type::block:
        return "a block device";
    case fs::file_type::socket:
        return "a socket";
    default:
        return {};
    }
}

void write_output_file(const fs::path& file, std::string_view text) {
    std::error_code ec;
    auto type = fs::status(file, ec).type();
    if (type != fs::file_type::fifo && type != fs::file_type::character &&
        !reached_through_proc(file)) {
        write_file_atomically(file, text);
        return;
    }
    int err = 0;
    std::FILE* f = open_existing_file(file, err);
    if (!f)
        throw fs::filesystem_error("cannot write", file,
                                   std::error_code(err, std::generic_category()));
    errno = 0;
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = std::fflush(f) == 0 && ok;
    err = errno;
    ok = std::fclose(f) == 0 && ok;
    if (!ok)
        throw fs::filesystem_error("cannot write", file,
                                   std::error_code(err ? err : (errno ? errno : EIO),
                                                   std::generic_category()));
}

FileLock::FileLock(FileLock&& other) noexcept : handle_(other.handle_) {
    other.handle_ = -1;
}
FileLock& FileLock::operator=(FileLock&& other) noexcept {
    if (this != &other) {
        release();
        handle_ = other.handle_;
        other.handle_ = -1;
    }
    return *this;
}
FileLock::~FileLock() {
    release();
}

} // namespace cvm::platform
