// SharedFile on POSIX: a plain descriptor (any descriptor allows renames and deletion).
// Windows: windows/shared_file.cpp.
#include "platform/shared_file.h"
#include "platform/posix/regular_file.h"

#include <cerrno>
#include <cstdio>

#include <fcntl.h>
#include <unistd.h>

namespace cvm::platform {

SharedFile::SharedFile(SharedFile&& other) noexcept : fd_(other.fd_) {
    other.fd_ = -1;
}

SharedFile& SharedFile::operator=(SharedFile&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = other.fd_;
        other.fd_ = -1;
    }
    return *this;
}

int SharedFile::open(const std::filesystem::path& path, Mode mode) {
    close();
    int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    if (mode == Mode::Read)
        flags |= O_RDONLY;
    else
        flags |= O_WRONLY | O_CREAT | (mode == Mode::Append ? O_APPEND : O_TRUNC);
    int fd = -1;
    if (int err = open_regular_file(path, flags, fd)) return err;
    if (int fl = fcntl(fd, F_GETFL); fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int err = errno;
        ::close(fd);
        return err;
    }
    fd_ = fd;
    return 0;
}

bool SharedFile::is_open() const {
    return fd_ >= 0;
}

void SharedFile::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

int SharedFile::write_all(const void* data, std::size_t size) {
    if (fd_ < 0) return EBADF;
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd_, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return EIO;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return 0;
}

std::size_t SharedFile::read(void* buffer, std::size_t size, int* error) {
    if (fd_ < 0) {
        if (error) *error = EBADF;
        return 0;
    }
    char* p = static_cast<char*>(buffer);
    std::size_t got = 0;
    while (got < size) {
        ssize_t n = ::read(fd_, p + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            if (error) *error = errno;
            return 0;
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    return got;
}

void rename_shared_file(const std::filesystem::path& from, const std::filesystem::path& to,
                        std::error_code& ec) {
    ec.clear();
    if (std::rename(from.c_str(), to.c_str()) != 0) ec.assign(errno, std::generic_category());
}

void remove_shared_file(const std::filesystem::path& path, std::error_code& ec) {
    ec.clear();
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) ec.assign(errno, std::generic_category());
}

} // namespace cvm::platform
