#pragma once
// A download read while it arrives: the downloader (download_curl.cpp) tells the tap how far its
// part file has grown, and a reader on another thread takes the bytes in order from that file
// (stream_extract.h extracts them). The download never waits for the reader: the part file is
// the buffer, so a reader that falls behind costs no memory and a resumed download is read from
// its first byte again. The end of the bytes is only reported once the download's size and
// SHA-256 were verified; a download that fails, or that starts its part file again, makes the
// reader's next read throw.
//
// The reader's handle lets the downloader rename the part file into place, or delete it, while
// it reads (platform/shared_file.h: on Windows too).
#include "install/extract.h"
#include "platform/shared_file.h"

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>

namespace cvm::install {

class DownloadTap : public ArchiveSource {
public:
    explicit DownloadTap(std::uint64_t expected_size = 0) : expected_(expected_size) {}

    // Downloader side. An attempt starts with `have` bytes already in `part`.
    void attempt(const std::filesystem::path& part, std::uint64_t have);
    // The part file now holds `size` bytes, written out (readable through another handle).
    void grew(std::uint64_t size);
    // The download is complete and verified, renamed to `file`; `sha256` is its checksum.
    void verified(const std::filesystem::path& file, const std::string& sha256);
    // The download failed or was abandoned: nothing more will come.
    void failed();
    // Whether the reader side gave up on this download (the downloader then stops it).
    bool abandoned();

    // Reader side: blocks until bytes are there; 0 once all were read and verified.
    std::size_t read(void* buffer, std::size_t size) override;
    std::uint64_t expected_size() const override { return expected_; }
    // Nothing will use this download any more (another archive of the install failed): the
    // downloader stops it, and the whole download fails, at its next look (within a fraction of
    // a second).
    void abandon();

    enum class Outcome { Verified, Failed };
    // Waits for the download to end.
    Outcome wait();
    // After Verified: the complete file and its SHA-256.
    std::filesystem::path file();
    std::string sha256();

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::uint64_t expected_ = 0;
    std::filesystem::path part_, file_;
    std::string sha256_;
    std::uint64_t size_ = 0;   // bytes in the part file
    std::uint64_t offset_ = 0; // bytes the reader took
    bool opened_ = false, restarted_ = false, verified_ = false, failed_ = false;
    bool abandoned_ = false;
    platform::SharedFile in_; // the reader's handle
};

} // namespace cvm::install
