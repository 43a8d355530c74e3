#include "ld_cache.h"

#include <cstring>

namespace cvm::probe {
namespace {

constexpr char kOldMagic[] = "ld.so-1.7.0";          // 11 characters
constexpr char kNewMagic[] = "glibc-ld.so.cache1.1"; // magic (17) + version (3)
constexpr std::size_t kNewHeaderSize = 48;
constexpr std::size_t kNewEntrySize = 24;
constexpr std::size_t kOldHeaderSize = 16;
constexpr std::size_t kOldEntrySize = 12;

std::uint32_t read_u32(const std::vector<std::uint8_t>& b, std::size_t at) {
    // The cache is written in the machine's byte order; every machine we run on is little-endian.
    return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
           static_cast<std::uint32_t>(b[at + 2]) << 16 |
           static_cast<std::uint32_t>(b[at + 3]) << 24;
}

bool starts_with_at(const std::vector<std::uint8_t>& b, std::size_t at, const char* text) {
    std::size_t n = std::strlen(text);
    return at + n <= b.size() && std::memcmp(b.data() + at, text, n) == 0;
}

// A NUL-terminated string at `base + offset`, or nothing when it runs off the end.
bool read_string(const std::vector<std::uint8_t>& b, std::size_t base, std::uint32_t offset,
                 std::string& out) {
    std::size_t at = base + offset;
    if (at >= b.size()) return false;
    const auto* begin = b.data() + at;
    const void* nul = std::memchr(begin, 0, b.size() - at);
    if (!nul) return false;
    out.assign(reinterpret_cast<const char*>(begin),
               static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - begin));
    return true;
}

} // namespace

std::vector<LdCacheEntry> parse_ld_cache(const std::vector<std::uint8_t>& bytes) {
    std::vector<LdCacheEntry> entries;
    std::size_t start = 0;
    if (starts_with_at(bytes, 0, kOldMagic)) {
        if (bytes.size() < kOldHeaderSize) return entries;
        std::uint64_t old_count = read_u32(bytes, 12);
        std::uint64_t end = kOldHeaderSize + old_count * kOldEntrySize;
        start = static_cast<std::size_t>((end + 7) & ~std::uint64_t{7});
        if (end > bytes.size()) return entries;
    }
    if (!starts_with_at(bytes, start, kNewMagic) || start + kNewHeaderSize > bytes.size())
        return entries;
    std::uint64_t count = read_u32(bytes, start + 20);
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint64_t at = start + kNewHeaderSize + i * kNewEntrySize;
        if (at + kNewEntrySize > bytes.size()) break;
        LdCacheEntry entry;
        // String offsets in the new format count from the start of its header.
        if (!read_string(bytes, start, read_u32(bytes, static_cast<std::size_t>(at) + 4),
                         entry.name) ||
            !read_string(bytes, start, read_u32(bytes, static_cast<std::size_t>(at) + 8),
                         entry.path))
            break;
        entries.push_back(std::move(entry));
    }
    return entries;
}

} // namespace cvm::probe
