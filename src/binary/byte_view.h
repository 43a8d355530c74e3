#pragma once
// Bounds-checked reads over an untrusted byte buffer. Every accessor returns std::nullopt
// (never reads out of range) so the binary readers stay safe against hostile files.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace cvm::binary {

enum class Endian { little, big };

class ByteView {
public:
    ByteView() = default;
    ByteView(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    std::size_t size() const { return size_; }
    const std::uint8_t* data() const { return data_; }

    // True when [offset, offset + length) lies inside the buffer (overflow-safe).
    bool contains(std::uint64_t offset, std::uint64_t length) const {
        return offset <= size_ && length <= size_ - offset;
    }

    // The sub-range [offset, offset + length), or nullopt when it does not fit.
    std::optional<ByteView> slice(std::uint64_t offset, std::uint64_t length) const {
        if (!contains(offset, length)) return std::nullopt;
        return ByteView(data_ + offset, static_cast<std::size_t>(length));
    }

    std::optional<std::uint8_t> u8(std::uint64_t offset) const {
        if (!contains(offset, 1)) return std::nullopt;
        return data_[offset];
    }

    std::optional<std::uint16_t> u16(std::uint64_t offset, Endian e) const {
        auto v = read_uint(offset, 2, e);
        if (!v) return std::nullopt;
        return static_cast<std::uint16_t>(*v);
    }
    std::optional<std::uint32_t> u32(std::uint64_t offset, Endian e) const {
        auto v = read_uint(offset, 4, e);
        if (!v) return std::nullopt;
        return static_cast<std::uint32_t>(*v);
    }
    std::optional<std::uint64_t> u64(std::uint64_t offset, Endian e) const {
        return read_uint(offset, 8, e);
    }
    std::optional<std::uint16_t> le16(std::uint64_t offset) const {
        return u16(offset, Endian::little);
    }
    std::optional<std::uint32_t> le32(std::uint64_t offset) const {
        return u32(offset, Endian::little);
    }
    std::optional<std::uint64_t> le64(std::uint64_t offset) const {
        return u64(offset, Endian::little);
    }

    // A NUL-terminated string starting at offset, at most max_length bytes long, that must end
    // (with its NUL) before `limit` (defaults to the end of the buffer). nullopt when unterminated.
    std::optional<std::string> c_string(std::uint64_t offset, std::size_t max_length = 4096,
                                        std::optional<std::uint64_t> limit = std::nullopt) const {
        std::uint64_t end = size_;
        if (limit && *limit < end) end = *limit;
        if (offset >= end) return std::nullopt;
        const std::uint64_t span = std::min<std::uint64_t>(end - offset, max_length + 1);
        const void* nul = std::memchr(data_ + offset, 0, static_cast<std::size_t>(span));
        if (!nul) return std::nullopt;
        return std::string(
            reinterpret_cast<const char*>(data_ + offset),
            static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - (data_ + offset)));
    }

    bool starts_with(std::uint64_t offset, const char* text, std::size_t length) const {
        if (!contains(offset, length)) return false;
        for (std::size_t i = 0; i < length; ++i)
            if (data_[offset + i] != static_cast<std::uint8_t>(text[i])) return false;
        return true;
    }

private:
    std::optional<std::uint64_t> read_uint(std::uint64_t offset, unsigned width, Endian e) const {
        if (!contains(offset, width)) return std::nullopt;
        std::uint64_t v = 0;
        for (unsigned i = 0; i < width; ++i) {
            const unsigned index = e == Endian::little ? width - 1 - i : i;
            v = (v << 8) | data_[offset + index];
        }
        return v;
    }

    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace cvm::binary
