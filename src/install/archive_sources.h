#pragma once
// The byte sources libarchive reads an archive from besides a whole file: a slice of a larger file
// (an installer's payload), and bytes that arrive in order (a download) with their first bytes
// read ahead to recognise the format.
#include <archive.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "install/archive_handles.h"
#include "install/archive_types.h"

namespace cvm::install {

// libarchive reads the slice through these callbacks: positions are relative to its start, so
// the archive's own offsets (7-Zip's header position) come out right.
class SliceSource {
public:
    SliceSource(const std::filesystem::path& file, const EmbeddedArchive& slice);
    int open(archive* a);
    static la_ssize_t read(archive* a, void* self, const void** buffer);
    static la_int64_t skip(archive*, void* self, la_int64_t request);
    static la_int64_t seek(archive*, void* self, la_int64_t offset, int whence);

private:
    std::filesystem::path path_;
    std::uint64_t base_;
    std::uint64_t length_;
    std::uint64_t position_ = 0;
    std::ifstream in_;
    std::vector<char> buffer_;
};

// The first bytes of a source, read ahead to recognise the format, then served again.
class PeekedSource : public ArchiveSource {
public:
    explicit PeekedSource(ArchiveSource& source);
    const unsigned char* head() const {
        return reinterpret_cast<const unsigned char*>(head_.data());
    }
    std::size_t head_size() const { return head_.size(); }
    std::size_t read(void* buffer, std::size_t size) override;
    std::uint64_t expected_size() const override { return source_.expected_size(); }

private:
    ArchiveSource& source_;
    std::string head_;
    std::size_t served_ = 0;
};

// libarchive's read callback over a source; what the source throws becomes the archive's error.
struct CallbackReader {
    ArchiveSource* source;
    std::vector<char> buffer = std::vector<char>(kReadBlock);

    static la_ssize_t read(archive* a, void* self, const void** out);
};

} // namespace cvm::install
