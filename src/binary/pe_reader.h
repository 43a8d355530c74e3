#pragma once
// A reader for Windows PE files (DLLs and executables) that works on any platform: machine,
// imported DLL names (normal and delay-load), and the VS_VERSIONINFO resource (the fixed file
// and product versions, and the strings of the first StringFileInfo table). Every offset is
// checked; a hostile or truncated file gives an error or a warning, never a crash.

#include "binary/byte_source.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cvm::binary {

namespace pe {
constexpr std::uint16_t machine_i386 = 0x014c;
constexpr std::uint16_t machine_amd64 = 0x8664;
constexpr std::uint16_t machine_arm64 = 0xaa64;
constexpr std::uint16_t machine_armnt = 0x01c4;
} // namespace pe

struct FourPartVersion {
    std::array<std::uint16_t, 4> parts{};
    std::string str() const; // "a.b.c.d"
    bool operator==(const FourPartVersion& o) const { return parts == o.parts; }
    bool operator!=(const FourPartVersion& o) const { return parts != o.parts; }
};

struct PeSection {
    std::string name; // ".rdata" (the 8-byte field without its NUL padding)
    std::uint32_t raw_offset = 0;
    std::uint32_t raw_size = 0;
};

struct PeInfo {
    std::uint16_t machine = 0;
    bool pe32_plus = false; // PE32+ (64-bit image)
    bool is_dll = false;
    std::uint16_t subsystem = 0;
    std::vector<std::string> imports;               // import directory, in file order
    std::vector<std::string> delay_imports;         // delay-load import directory
    std::optional<FourPartVersion> file_version;    // VS_FIXEDFILEINFO dwFileVersionMS/LS
    std::optional<FourPartVersion> product_version; // dwProductVersionMS/LS
    // Strings of the first StringFileInfo table ("FileVersion", "ProductName", ...), ASCII only.
    std::map<std::string, std::string> version_strings;
    std::vector<PeSection> sections; // the section table, in file order
    std::vector<std::string> warnings;

    std::string machine_name() const;
};

struct PeReadResult {
    std::optional<PeInfo> info;
    std::string error;
    explicit operator bool() const { return info.has_value(); }
};

PeReadResult read_pe(const ByteSource& source);
PeReadResult read_pe(ByteView bytes);
PeReadResult read_pe_file(const std::string& path);
bool looks_like_pe(ByteView bytes); // "MZ" at the start

std::string pe_machine_name(std::uint16_t machine);

} // namespace cvm::binary
