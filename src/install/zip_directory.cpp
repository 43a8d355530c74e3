#include "install/zip_directory.h"

#include "install/error.h"
#include "platform/platform.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

#include <zlib.h>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64End = 0x06064b50;
constexpr std::uint32_t kCentralHeader = 0x02014b50;
constexpr unsigned kUnixHost = 3;

std::uint64_t little(const unsigned char* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

class ZipFile {
public:
    ZipFile(const fs::path& path, std::string name) : name_(std::move(name)) {
        in_.open(path, std::ios::binary);
        if (!in_) fail_operation("cannot read " + path.u8string());
        std::error_code ec;
        size_ = fs::file_size(path, ec);
        if (ec) fail_operation("cannot read " + path.u8string() + ": " + ec.message());
    }
    std::uint64_t size() const { return size_; }
    std::vector<unsigned char> bytes(std::uint64_t offset, std::uint64_t count) {
        if (offset > size_ || count > size_ - offset) malformed("points past the end of the file");
        std::vector<unsigned char> out(static_cast<std::size_t>(count));
        in_.seekg(static_cast<std::streamoff>(offset));
        in_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(count));
        if (static_cast<std::uint64_t>(in_.gcount()) != count)
            fail_operation("cannot read " + name_ + ": it ended early");
        return out;
    }
    [[noreturn]] void malformed(const std::string& why) const {
        fail_input("archive " + name_ + " is damaged: its zip central directory " + why +
                   "; download it again");
    }

private:
    std::string name_;
    std::ifstream in_;
    std::uint64_t size_ = 0;
};

} // namespace

std::vector<ZipCentralEntry> read_zip_directory(const fs::path& path) {
    ZipFile zip(path, path.filename().u8string());
    // The end record is in the last 22 bytes plus a comment of at most 65535.
    std::uint64_t tail_size = std::min<std::uint64_t>(zip.size(), 22 + 65535);
    std::uint64_t tail_at = zip.size() - tail_size;
    std::vector<unsigned char> tail = zip.bytes(tail_at, tail_size);
    std::size_t end = std::string::npos;
    for (std::size_t i = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; i-- > 0;)
        if (little(&tail[i], 4) == kEndOfDirectory &&
            i + 22 + little(&tail[i + 20], 2) <= tail.size()) {
            end = i;
            break;
        }
    if (end == std::string::npos) zip.malformed("is missing (no end record)");
    const unsigned char* e = &tail[end];
    std::uint64_t count = little(e + 10, 2);
    std::uint64_t dir_size = little(e + 12, 4);
    std::uint64_t dir_at = little(e + 16, 4);
    if (count == 0xFFFF || dir_size == 0xFFFFFFFF || dir_at == 0xFFFFFFFF) {
        std::uint64_t end_at = tail_at + end;
        if (end_at < 20) zip.malformed("has no zip64 locator");
        auto locator = zip.bytes(end_at - 20, 20);
        if (little(locator.data(), 4) != kZip64Locator) zip.malformed("has no zip64 locator");
        auto end64 = zip.bytes(little(locator.data() + 8, 8), 56);
        if (little(end64.data(), 4) != kZip64End) zip.malformed("has a bad zip64 end record");
        count = little(end64.data() + 32, 8);
        dir_size = little(end64.data() + 40, 8);
        dir_at = little(end64.data() + 48, 8);
    }
    std::vector<unsigned char> dir = zip.bytes(dir_at, dir_size);
    std::vector<ZipCentralEntry> entries;
    std::size_t at = 0;
    for (std::uint64_t n = 0; n < count; ++n) {
        if (at + 46 > dir.size() || little(&dir[at], 4) != kCentralHeader)
            zip.malformed("ends before its " + std::to_string(count) + " entries");
        const unsigned char* h = &dir[at];
        unsigned host = static_cast<unsigned>(little(h + 4, 2) >> 8);
        ZipCentralEntry entry;
        entry.crc32 = static_cast<std::uint32_t>(little(h + 16, 4));
        std::uint64_t packed = little(h + 20, 4);
        entry.size = little(h + 24, 4);
        std::size_t name_len = static_cast<std::size_t>(little(h + 28, 2));
        std::size_t extra_len = static_cast<std::size_t>(little(h + 30, 2));
        std::size_t comment_len = static_cast<std::size_t>(little(h + 32, 2));
        std::uint32_t external = static_cast<std::uint32_t>(little(h + 38, 4));
        std::uint64_t local_at = little(h + 42, 4);
        if (at + 46 + name_len + extra_len + comment_len > dir.size())
            zip.malformed("has an entry that runs past its end");
        entry.name.assign(reinterpret_cast<const char*>(h + 46), name_len);
        // Zip64: the sizes that do not fit in 32 bits follow in the extra field, in this order.
        const unsigned char* extra = h + 46 + name_len;
        for (std::size_t x = 0; x + 4 <= extra_len;) {
            std::size_t id = static_cast<std::size_t>(little(extra + x, 2));
            std::size_t len = static_cast<std::size_t>(little(extra + x + 2, 2));
            if (x + 4 + len > extra_len) break;
            if (id == 0x0001) {
                const unsigned char* f = extra + x + 4;
                std::size_t left = len;
                auto take = [&](std::uint64_t& value) {
                    if (value != 0xFFFFFFFF) return;
                    if (left < 8) zip.malformed("has a short zip64 field");
                    value = little(f, 8);
                    f += 8;
                    left -= 8;
                };
                take(entry.size);
                take(packed);
                take(local_at);
            }
            x += 4 + len;
        }
        if (host == kUnixHost) entry.unix_mode = external >> 16;
        entry.symlink = host == kUnixHost && (entry.unix_mode & 0170000) == 0120000;
        entry.directory = (!entry.name.empty() && entry.name.back() == '/') ||
                          (host == kUnixHost && (entry.unix_mode & 0170000) == 0040000) ||
                          (external & 0x10) != 0;
        entries.push_back(std::move(entry));
        at += 46 + name_len + extra_len + comment_len;
    }
    return entries;
}

void check_zip_data(const fs::path& zip, const fs::path& root, const ExtractResult& extracted,
                    const std::string& name) {
    check_zip_data(read_zip_directory(zip), root, extracted, name);
}

void check_zip_data(const std::vector<ZipCentralEntry>& central, const fs::path& root,
                    const ExtractResult& extracted, const std::string& name) {
    std::map<std::string, const ZipCentralEntry*> by_path;
    for (const auto& c : central) {
        std::string path = normalize_entry_path(c.name, nullptr);
        if (!path.empty()) by_path.emplace(path, &c);
    }
    std::vector<char> buffer(1 << 20);
    for (const auto& e : extracted.entries) {
        if (e.type != ExtractedEntry::Type::File) continue;
        auto it = by_path.find(e.path);
        if (it == by_path.end()) continue;
        std::ifstream in(root / fs::u8path(e.path), std::ios::binary);
        uLong crc = crc32(0L, Z_NULL, 0);
        std::uint64_t size = 0;
        while (in) {
            in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
            auto got = static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0));
            crc = crc32_z(crc, reinterpret_cast<const Bytef*>(buffer.data()), got);
            size += got;
        }
        if (in.bad()) fail_operation("cannot read " + (root / fs::u8path(e.path)).u8string());
        if (size != it->second->size || static_cast<std::uint32_t>(crc) != it->second->crc32)
            fail_input("archive " + name + " refused: entry \"" + e.path + "\" holds " +
                       std::to_string(size) + " bytes with CRC-32 " +
                       std::to_string(static_cast<std::uint32_t>(crc)) +
                       ", the central directory " + std::to_string(it->second->size) + " with " +
                       std::to_string(it->second->crc32) +
                       " (its local header and its central directory disagree)");
    }
}

} // namespace cvm::install
