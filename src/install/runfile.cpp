#include "install/runfile.h"

#include "install/error.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <vector>

namespace cvm::install {

namespace fs = std::filesystem;

namespace {

// makeself's header is a few hundred lines (more with an embedded license text).
constexpr std::size_t kHeaderScan = 4 << 20;

std::string read_prefix(const fs::path& file, std::size_t limit) {
    std::ifstream in(file, std::ios::binary);
    if (!in) fail_operation("cannot read " + file.u8string());
    std::string text(limit, '\0');
    in.read(text.data(), static_cast<std::streamsize>(limit));
    text.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    return text;
}

// The value of `name="..."` on a line of its own (makeself writes each on one line).
std::string quoted_value(const std::string& text, const std::string& name) {
    std::string key = "\n" + name + "=\"";
    auto at = text.find(key);
    if (at == std::string::npos) return {};
    at += key.size();
    auto end = text.find('"', at);
    if (end == std::string::npos || text.find('\n', at) < end) return {};
    return text.substr(at, end - at);
}

} // namespace

bool is_makeself_archive(const fs::path& file) {
    std::string head = read_prefix(file, 4096);
    if (head.rfind("#!", 0) != 0) return false;
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower.find("makeself") != std::string::npos;
}

MakeselfHeader parse_makeself_header(const std::string& text, const std::string& display) {
    MakeselfHeader h;
    // `offset=`head -n N "$0" | wc -c ...``: the payload starts after the first N lines.
    const std::string marker = "head -n ";
    for (std::size_t at = text.find(marker); at != std::string::npos;
         at = text.find(marker, at + 1)) {
        std::size_t p = at + marker.size();
        std::size_t digits = 0;
        std::uint64_t n = 0;
        while (p + digits < text.size() && digits < 12 &&
               std::isdigit(static_cast<unsigned char>(text[p + digits]))) {
            n = n * 10 + static_cast<std::uint64_t>(text[p + digits] - '0');
            ++digits;
        }
        if (digits > 0 && n > 0) {
            h.header_lines = n;
            break;
        }
    }
    if (h.header_lines == 0)
        fail_input(display + " is not a makeself runfile cvm can read: its header gives no "
                             "payload offset (`head -n N`); download the installer again");
    std::string sizes = quoted_value(text, "filesizes");
    bool any = false;
    std::uint64_t current = 0;
    bool in_number = false;
    for (char c : sizes + " ") {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            if (current > (UINT64_MAX - 9) / 10)
                fail_input(display + ": its header gives an impossible payload size");
            current = current * 10 + static_cast<std::uint64_t>(c - '0');
            in_number = true;
        } else if (c == ' ' || c == '\t') {
            if (in_number) {
                if (h.payload_size > UINT64_MAX - current)
                    fail_input(display + ": its header gives an impossible payload size");
                h.payload_size += current;
                any = true;
            }
            current = 0;
            in_number = false;
        } else {
            any = false;
            break;
        }
    }
    if (!any || h.payload_size == 0)
        fail_input(display + " is not a makeself runfile cvm can read: its header gives no "
                             "payload size (filesizes=\"...\"); download the installer again");
    h.label = quoted_value(text, "label");
    return h;
}

EmbeddedArchive find_runfile_payload(const fs::path& file) {
    const std::string display = file.filename().u8string();
    std::error_code ec;
    const std::uint64_t size = fs::file_size(file, ec);
    if (ec) fail_operation("cannot read " + file.u8string() + ": " + ec.message());
    std::string text = read_prefix(file, kHeaderScan);
    MakeselfHeader h = parse_makeself_header(text, display);
    // The offset is the bytes of the first N lines; fewer lines in the file: past its end.
    std::uint64_t lines = 0;
    std::size_t at = 0;
    while (lines < h.header_lines) {
        at = text.find('\n', at);
        if (at == std::string::npos) break;
        ++at;
        ++lines;
    }
    if (lines < h.header_lines && text.size() < size)
        fail_input(display + ": its header is longer than " + std::to_string(kHeaderScan >> 20) +
                   " MiB; this is no runfile cvm can read");
    if (lines < h.header_lines)
        fail_input(display + ": its payload offset (after line " + std::to_string(h.header_lines) +
                   ") points past the end of the file (" + std::to_string(size) +
                   " bytes); the download is truncated or damaged: download it again");
    h.payload_offset = at;
    if (h.payload_offset > size || h.payload_size > size - h.payload_offset)
        fail_input(display + " is truncated: its header promises " +
                   std::to_string(h.payload_size) + " bytes of payload at offset " +
                   std::to_string(h.payload_offset) + ", the file has " + std::to_string(size) +
                   " bytes; download it again");
    EmbeddedArchive slice;
    slice.format = EmbeddedArchive::Format::CompressedTar;
    slice.offset = h.payload_offset;
    slice.length = h.payload_size;
    return slice;
}

} // namespace cvm::install
