#include "image/blob_file.h"

#include <cerrno>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>

namespace cvm::image {

OwnedFd::~OwnedFd() {
    if (fd_ >= 0) ::close(fd_);
}

BlobFile::BlobFile(const fs::path& path, const fs::path& shown) : path_(path), shown_(shown) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) failed(errno);
}

BlobFile::BlobFile(int dir, const std::string& name, const fs::path& path, const fs::path& shown)
    : path_(path), shown_(shown) {
    fd_ = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) failed(errno);
}

BlobFile::~BlobFile() {
    if (fd_ >= 0) ::close(fd_);
}

void BlobFile::failed(int error) const {
    throw fs::filesystem_error("cannot write", shown_,
                               std::error_code(error, std::generic_category()));
}

void BlobFile::write(const void* data, std::size_t size) {
    hash_.update(data, size);
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd_, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) failed(n < 0 ? errno : EIO);
        p += n;
        size -= static_cast<std::size_t>(n);
        size_ += static_cast<std::uint64_t>(n);
    }
}

std::string BlobFile::close() {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && errno != EINTR) failed(errno);
    return "sha256:" + hash_.hex_digest();
}

} // namespace cvm::image
