#pragma once
// A blob of an image layout being written: a new file written with write(2) and hashed as it
// goes, so the digest is known when the last byte is out and nothing is read back. A failed
// write (a full disk, an I/O error) throws std::filesystem::filesystem_error naming `shown`: the
// folder the user named, never the temporary file.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "install/sha256.h"

namespace cvm::image {

namespace fs = std::filesystem;

// A file descriptor closed when it goes out of scope (-1: none).
class OwnedFd {
public:
    explicit OwnedFd(int fd = -1) : fd_(fd) {}
    ~OwnedFd();
    OwnedFd(const OwnedFd&) = delete;
    OwnedFd& operator=(const OwnedFd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

class BlobFile {
public:
    // Creates `path`, which must not exist yet.
    BlobFile(const fs::path& path, const fs::path& shown);
    // Creates `name` in the open folder `dir` (openat, O_EXCL|O_NOFOLLOW: never through a link);
    // `path` is what path() says (the folder's path and `name`).
    BlobFile(int dir, const std::string& name, const fs::path& path, const fs::path& shown);
    ~BlobFile(); // closes the file; removing it is the caller's business
    BlobFile(const BlobFile&) = delete;
    BlobFile& operator=(const BlobFile&) = delete;

    void write(const void* data, std::size_t size);
    // Closes the file (a late error of the file system is thrown too) and returns the digest,
    // "sha256:<hex>".
    std::string close();
    std::uint64_t size() const { return size_; }
    const fs::path& path() const { return path_; }

private:
    [[noreturn]] void failed(int error) const;
    fs::path path_, shown_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
    install::Sha256 hash_;
};

} // namespace cvm::image
