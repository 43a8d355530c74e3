#include "binary/nccl_version.h"

#include "binary/elf_reader.h"

#include <algorithm>
#include <vector>

namespace cvm::binary {
namespace {

constexpr std::string_view kBanner = "NCCL version ";
constexpr std::uint64_t kPiece = std::uint64_t(4) << 20;
// No NCCL has read-only data near this; a larger section is not read past it.
constexpr std::uint64_t kMaxScanned = std::uint64_t(512) << 20;

bool digit(char c) {
    return c >= '0' && c <= '9';
}

// Reads a number of at most 4 digits at `at`; advances it.
std::optional<unsigned> number(std::string_view s, size_t& at) {
    size_t start = at;
    unsigned v = 0;
    while (at < s.size() && digit(s[at]) && at - start < 4)
        v = v * 10 + static_cast<unsigned>(s[at++] - '0');
    if (at == start || (at < s.size() && digit(s[at]))) return std::nullopt;
    return v;
}

std::optional<NcclBanner> parse_at(std::string_view s, size_t begin) {
    size_t at = begin + kBanner.size();
    NcclBanner b;
    for (int i = 0; i < 3; ++i) {
        auto n = number(s, at);
        if (!n) return std::nullopt;
        b.version[static_cast<size_t>(i)] = *n;
        if (i < 2) {
            if (at >= s.size() || s[at] != '.') return std::nullopt;
            ++at;
        }
    }
    // An optional suffix (NCCL_SUFFIX, e.g. "a0"), then "+cudaM.m".
    size_t end = at;
    while (end < s.size() && end - at < 16 && s[end] != '+' && s[end] > ' ' && s[end] < 0x7f)
        ++end;
    size_t text_end = end;
    if (s.substr(end, 5) == "+cuda") {
        size_t c = end + 5;
        auto major = number(s, c);
        if (major && c < s.size() && s[c] == '.') {
            ++c;
            if (auto minor = number(s, c)) {
                b.cuda_major = *major;
                b.cuda_minor = *minor;
                text_end = c;
            }
        }
    }
    b.text = std::string(s.substr(begin, text_end - begin));
    return b;
}

std::optional<NcclBanner> scan(const ByteSource& file, std::uint64_t offset, std::uint64_t size) {
    size = std::min(size, kMaxScanned);
    // Pieces overlap by a banner's length so one split across two is still found.
    const std::uint64_t overlap = 64;
    for (std::uint64_t done = 0; done < size;) {
        std::uint64_t length = std::min(kPiece, size - done);
        auto bytes = file.read_up_to(offset + done, length);
        if (!bytes || bytes->empty()) break;
        std::string_view s(reinterpret_cast<const char*>(bytes->data()), bytes->size());
        const bool last = done + length >= size;
        // A banner starting in the overlap may be cut short here: the next piece holds it whole.
        for (size_t at = s.find(kBanner); at != std::string_view::npos;
             at = s.find(kBanner, at + 1)) {
            if (!last && at + overlap > s.size()) break;
            if (auto b = parse_at(s, at)) return b;
        }
        if (last) break;
        done += length > overlap ? length - overlap : length;
    }
    return std::nullopt;
}

} // namespace

std::optional<std::array<unsigned, 3>> decode_nccl_version_code(long long code) {
    if (code <= 0) return std::nullopt;
    // Up to 2.8 X*1000+Y*100+Z (minor below 10); after, X*10000+Y*100+Z (2.9.6 is 20906).
    if (code >= 10000 && code < 1000000)
        return std::array<unsigned, 3>{static_cast<unsigned>(code / 10000),
                                       static_cast<unsigned>(code / 100 % 100),
                                       static_cast<unsigned>(code % 100)};
    if (code >= 1000 && code < 10000)
        return std::array<unsigned, 3>{static_cast<unsigned>(code / 1000),
                                       static_cast<unsigned>(code / 100 % 10),
                                       static_cast<unsigned>(code % 100)};
    return std::nullopt;
}

long long nccl_version_code(unsigned major, unsigned minor, unsigned patch) {
    if (major <= 2 && minor <= 8) return major * 1000LL + minor * 100LL + patch;
    return major * 10000LL + minor * 100LL + patch;
}

std::string NcclBanner::version_text() const {
    return std::to_string(version[0]) + "." + std::to_string(version[1]) + "." +
           std::to_string(version[2]);
}

std::string NcclBanner::cuda_text() const {
    if (cuda_major == 0) return {};
    return std::to_string(cuda_major) + "." + std::to_string(cuda_minor);
}

std::optional<NcclBanner> find_nccl_banner(std::string_view bytes) {
    for (size_t at = bytes.find(kBanner); at != std::string_view::npos;
         at = bytes.find(kBanner, at + 1))
        if (auto b = parse_at(bytes, at)) return b;
    return std::nullopt;
}

std::optional<NcclBanner> read_nccl_banner(const ByteSource& file) {
    auto head = file.read_up_to(0, 64);
    if (head && looks_like_elf(ByteView(head->data(), head->size()))) {
        const std::uint32_t sht_progbits = 1;
        bool any = false;
        for (const auto& s : read_elf_sections(file)) {
            if (s.type != sht_progbits || (s.name != ".rodata" && s.name != ".lrodata")) continue;
            any = true;
            if (auto b = scan(file, s.offset, s.size)) return b;
        }
        if (any) return std::nullopt;
    }
    return scan(file, 0, file.size());
}

std::optional<NcclBanner> read_nccl_banner_file(const std::string& path) {
    auto src = FileSource::open(path);
    if (!src) return std::nullopt;
    return read_nccl_banner(*src);
}

} // namespace cvm::binary
