#include "install/download_tap.h"

#include "install/error.h"
#include "platform/platform.h"

#include <algorithm>
#include <cstring>

namespace cvm::install {

namespace fs = std::filesystem;

void DownloadTap::attempt(const fs::path& part, std::uint64_t have) {
    std::lock_guard<std::mutex> lock(mutex_);
    // A part file that shrank was removed and begun again: the bytes read from it are void.
    if (opened_ && have < size_) restarted_ = true;
    part_ = part;
    size_ = have;
    changed_.notify_all();
}

void DownloadTap::grew(std::uint64_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_ = size;
    changed_.notify_all();
}

void DownloadTap::verified(const fs::path& file, const std::string& sha256) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::error_code ec;
    std::uint64_t size = fs::file_size(file, ec);
    if (!ec) size_ = size;
    file_ = file;
    sha256_ = sha256;
    verified_ = true;
    changed_.notify_all();
}

void DownloadTap::failed() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (verified_) return;
    failed_ = true;
    changed_.notify_all();
}

void DownloadTap::abandon() {
    std::lock_guard<std::mutex> lock(mutex_);
    abandoned_ = true;
}

bool DownloadTap::abandoned() {
    std::lock_guard<std::mutex> lock(mutex_);
    return abandoned_ && !verified_ && !failed_;
}

std::size_t DownloadTap::read(void* buffer, std::size_t size) {
    using Mode = platform::SharedFile::Mode;
    std::size_t n = 0;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock,
                      [&] { return size_ > offset_ || verified_ || failed_ || restarted_; });
        if (restarted_ || failed_) {
            in_.close(); // what it held is void (Windows: a deleted file lives while it is open)
            if (restarted_) fail_operation("the download started again from its first byte");
            fail_operation("the download stopped");
        }
        if (size_ <= offset_) return 0; // verified, all read
        if (!opened_) {
            int err = in_.open(verified_ ? file_ : part_, Mode::Read);
            if (err != 0 && !verified_) {
                // Renamed into place just now: the tap hears of it right after.
                changed_.wait(lock, [&] { return verified_ || failed_ || restarted_; });
                if (!verified_) fail_operation("the download stopped");
                err = in_.open(file_, Mode::Read);
            }
            if (err != 0)
                fail_operation("cannot read " + (verified_ ? file_ : part_).u8string() + ": " +
                               platform::error_text(err));
            opened_ = true;
        }
        n = static_cast<std::size_t>(std::min<std::uint64_t>(size, size_ - offset_));
    }
    // The bytes below size_ are on disk and never change while the part file is kept.
    int err = 0;
    std::size_t got = in_.read(buffer, n, &err);
    if (got != n) {
        in_.close();
        std::lock_guard<std::mutex> lock(mutex_);
        if (restarted_) fail_operation("the download started again from its first byte");
        fail_operation("cannot read the download's part file " + part_.u8string() + ": " +
                       (err != 0 ? platform::error_text(err) : "it ended early"));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    offset_ += got;
    return got;
}

DownloadTap::Outcome DownloadTap::wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return verified_ || failed_; });
    return verified_ ? Outcome::Verified : Outcome::Failed;
}

fs::path DownloadTap::file() {
    std::lock_guard<std::mutex> lock(mutex_);
    return file_;
}

std::string DownloadTap::sha256() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sha256_;
}

} // namespace cvm::install
