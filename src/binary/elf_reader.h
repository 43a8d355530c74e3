#pragma once
// A reader for the dynamic-linking facts of an ELF file (no libelf): class, byte order, machine,
// SONAME, DT_NEEDED, DT_RPATH, DT_RUNPATH. Every offset in the file is checked; a hostile or
// truncated file gives an error or a warning, never a crash.

#include "binary/byte_source.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cvm::binary {

namespace elf {
constexpr std::uint16_t em_386 = 3;
constexpr std::uint16_t em_ppc = 20;
constexpr std::uint16_t em_ppc64 = 21;
constexpr std::uint16_t em_s390 = 22;
constexpr std::uint16_t em_arm = 40;
constexpr std::uint16_t em_x86_64 = 62;
constexpr std::uint16_t em_aarch64 = 183;
constexpr std::uint16_t em_riscv = 243;

constexpr std::uint16_t et_exec = 2;
constexpr std::uint16_t et_dyn = 3;
} // namespace elf

struct ElfInfo {
    int bits = 0; // 32 or 64
    Endian endian = Endian::little;
    std::uint16_t type = 0; // e_type: 2 executable, 3 shared object (or PIE)
    std::uint16_t machine = 0;
    std::uint8_t os_abi = 0;
    bool has_dynamic = false;
    std::optional<std::string> soname;
    std::vector<std::string> needed;
    // DT_RPATH / DT_RUNPATH as written (colon-separated lists, $ORIGIN not expanded).
    std::optional<std::string> rpath;
    std::optional<std::string> runpath;
    bool nodeflib = false; // DF_1_NODEFLIB: the loader skips ld.so.cache and the default folders
    std::optional<std::string> interpreter; // PT_INTERP
    // Non-fatal problems (an out-of-range string, a truncated table): what could be read is kept.
    std::vector<std::string> warnings;

    std::string machine_name() const;
    std::vector<std::string> rpath_entries() const;
    std::vector<std::string> runpath_entries() const;
};

struct ElfReadResult {
    std::optional<ElfInfo> info;
    std::string error; // set when info is empty: what is wrong with the file
    explicit operator bool() const { return info.has_value(); }
};

// One entry of the section header table, named from e_shstrndx ("" when unreadable).
struct ElfSection {
    std::string name;
    std::uint32_t type = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
};
// The section table of an ELF file; empty when the file has none or it cannot be read.
std::vector<ElfSection> read_elf_sections(const ByteSource& source);

ElfReadResult read_elf(const ByteSource& source);
ElfReadResult read_elf(ByteView bytes);
ElfReadResult read_elf_file(const std::string& path);
// Whether the bytes start with the ELF magic (cheap test before a full read).
bool looks_like_elf(ByteView bytes);

std::string elf_machine_name(std::uint16_t machine);

// Splits a DT_RPATH / DT_RUNPATH / LD_LIBRARY_PATH value at ':' (and ';' as glibc does for
// LD_LIBRARY_PATH when `semicolons` is set). Empty elements are kept as "" (they mean the
// current folder to ld.so).
std::vector<std::string> split_search_path(const std::string& value, bool semicolons = false);

} // namespace cvm::binary
