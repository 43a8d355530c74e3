#pragma once
// Random access to the bytes of a file or buffer. The binary readers only pull the few ranges
// they need (headers, the dynamic segment, the import table), so a 600 MB cuDNN library is
// never read whole.

#include "binary/byte_view.h"

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cvm::binary {

class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual std::uint64_t size() const = 0;
    // Exactly `length` bytes from `offset`, or nullopt when the range is outside the source.
    virtual std::optional<std::vector<std::uint8_t>> read(std::uint64_t offset,
                                                          std::uint64_t length) const = 0;

    // Up to `length` bytes from `offset` (fewer at the end of the source); nullopt past the end.
    std::optional<std::vector<std::uint8_t>> read_up_to(std::uint64_t offset,
                                                        std::uint64_t length) const {
        const std::uint64_t total = size();
        if (offset >= total) return std::nullopt;
        if (length > total - offset) length = total - offset;
        return read(offset, length);
    }
};

class MemorySource : public ByteSource {
public:
    explicit MemorySource(ByteView bytes) : bytes_(bytes) {}
    std::uint64_t size() const override { return bytes_.size(); }
    std::optional<std::vector<std::uint8_t>> read(std::uint64_t offset,
                                                  std::uint64_t length) const override {
        auto part = bytes_.slice(offset, length);
        if (!part) return std::nullopt;
        return std::vector<std::uint8_t>(part->data(), part->data() + part->size());
    }

private:
    ByteView bytes_;
};

class FileSource : public ByteSource {
public:
    // nullptr when the file cannot be opened.
    static std::unique_ptr<FileSource> open(const std::string& path);
    std::uint64_t size() const override { return size_; }
    std::optional<std::vector<std::uint8_t>> read(std::uint64_t offset,
                                                  std::uint64_t length) const override;

private:
    FileSource() = default;
    mutable std::ifstream in_;
    std::uint64_t size_ = 0;
};

} // namespace cvm::binary
