#include "binary/byte_source.h"

#include <filesystem>
#include <system_error>

namespace cvm::binary {

namespace {
// No reader needs more than this in one piece; a larger request means a corrupt header.
constexpr std::uint64_t max_single_read = 64ull << 20;
} // namespace

std::unique_ptr<FileSource> FileSource::open(const std::string& path) {
    std::error_code ec;
    const auto fspath = std::filesystem::u8path(path);
    if (!std::filesystem::is_regular_file(fspath, ec)) return nullptr;
    const auto size = std::filesystem::file_size(fspath, ec);
    if (ec) return nullptr;
    std::unique_ptr<FileSource> source(new FileSource());
    source->in_.open(fspath, std::ios::binary);
    if (!source->in_) return nullptr;
    source->size_ = size;
    return source;
}

std::optional<std::vector<std::uint8_t>> FileSource::read(std::uint64_t offset,
                                                          std::uint64_t length) const {
    if (offset > size_ || length > size_ - offset || length > max_single_read) return std::nullopt;
    std::vector<std::uint8_t> out(static_cast<std::size_t>(length));
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    if (!in_) return std::nullopt;
    if (length > 0)
        in_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(length));
    if (static_cast<std::uint64_t>(in_.gcount()) != length) return std::nullopt;
    return out;
}

} // namespace cvm::binary
