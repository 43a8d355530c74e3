#include "install/sevenzip_installer.h"

#include "install/error.h"

#include <lzma.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <vector>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

constexpr unsigned char kSignature[6] = {'7', 'z', 0xBC, 0xAF, 0x27, 0x1C};
constexpr std::size_t kStartHeader = 32; // signature 6, version 2, CRC 4, offset 8, size 8, CRC 4
constexpr std::size_t kChunk = 4 << 20;

std::uint64_t little_endian(const unsigned char* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

} // namespace

bool is_windows_executable(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    char head[2] = {};
    in.read(head, 2);
    return in.gcount() == 2 && head[0] == 'M' && head[1] == 'Z';
}

bool parse_7z_start_header(const unsigned char* p, std::uint64_t* next_end) {
    if (std::memcmp(p, kSignature, sizeof kSignature) != 0) return false;
    // The start header's CRC covers the next header's offset, size and CRC (20 bytes): a stray
    // copy of the signature bytes in the stub fails it.
    auto crc = static_cast<std::uint32_t>(little_endian(p + 8, 4));
    if (lzma_crc32(p + 12, 20, 0) != crc) return false;
    std::uint64_t offset = little_endian(p + 12, 8), size = little_endian(p + 20, 8);
    if (offset > UINT64_MAX / 2 || size > UINT64_MAX / 2) return false;
    if (next_end != nullptr) *next_end = kStartHeader + offset + size;
    return true;
}

EmbeddedArchive find_7z_archive(const fs::path& file) {
    const std::string display = file.filename().u8string();
    std::error_code ec;
    const std::uint64_t size = fs::file_size(file, ec);
    if (ec) fail_operation("cannot read " + file.u8string() + ": " + ec.message());
    std::ifstream in(file, std::ios::binary);
    if (!in) fail_operation("cannot read " + file.u8string());
    // Chunks overlap by a start header, so a signature across a boundary is seen whole.
    std::vector<unsigned char> buffer(kChunk + kStartHeader);
    std::uint64_t base = 0;
    std::size_t kept = 0;
    bool truncated = false;
    std::uint64_t truncated_at = 0;
    for (;;) {
        in.read(reinterpret_cast<char*>(buffer.data()) + kept,
                static_cast<std::streamsize>(kChunk));
        std::size_t got = static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0));
        std::size_t have = kept + got;
        std::size_t last = have >= kStartHeader ? have - kStartHeader + 1 : 0;
        for (std::size_t i = 0; i < last; ++i) {
            if (buffer[i] != kSignature[0]) {
                const void* next = std::memchr(buffer.data() + i, kSignature[0], last - i);
                if (next == nullptr) break;
                i = static_cast<std::size_t>(static_cast<const unsigned char*>(next) -
                                             buffer.data());
            }
            std::uint64_t end = 0;
            if (!parse_7z_start_header(buffer.data() + i, &end)) continue;
            std::uint64_t at = base + i;
            if (end > size - at) {
                // Keep looking: the stub may hold a stray valid-looking header; report the first.
                if (!truncated) truncated_at = at;
                truncated = true;
                continue;
            }
            EmbeddedArchive slice;
            slice.format = EmbeddedArchive::Format::SevenZip;
            slice.offset = at;
            slice.length = end;
            return slice;
        }
        if (got == 0 || have < kStartHeader) break;
        // Keep the tail that could start a header.
        std::size_t tail = std::min(have, kStartHeader - 1);
        std::memmove(buffer.data(), buffer.data() + have - tail, tail);
        base += have - tail;
        kept = tail;
    }
    if (truncated)
        fail_input(display + " is truncated: its 7-Zip archive starts at offset " +
                   std::to_string(truncated_at) + " but ends past the file's " +
                   std::to_string(size) + " bytes; download it again");
    fail_input(display + " holds no 7-Zip archive: it is no NVIDIA local installer (a network "
                         "installer downloads its files itself); get the local installer "
                         "cuda_<version>_<driver>_win10.exe or run `cvm install X.Y`");
}

} // namespace cvm::install
