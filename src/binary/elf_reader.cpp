#include "binary/elf_reader.h"

#include <algorithm>

namespace cvm::binary {

namespace {

constexpr std::uint32_t pt_load = 1;
constexpr std::uint32_t pt_dynamic = 2;
constexpr std::uint32_t pt_interp = 3;
constexpr std::uint32_t sht_dynamic = 6;

constexpr std::uint64_t dt_null = 0;
constexpr std::uint64_t dt_needed = 1;
constexpr std::uint64_t dt_strtab = 5;
constexpr std::uint64_t dt_strsz = 10;
constexpr std::uint64_t dt_soname = 14;
constexpr std::uint64_t dt_rpath = 15;
constexpr std::uint64_t dt_runpath = 29;
constexpr std::uint64_t dt_flags_1 = 0x6ffffffb;
constexpr std::uint64_t df_1_nodeflib = 0x800;

// Limits far above any real library; a larger value means a corrupt or hostile header.
constexpr std::uint64_t max_headers = 65536;
constexpr std::uint64_t max_dynamic_bytes = 1u << 20;
constexpr std::uint64_t max_string = 16384;
constexpr std::size_t max_needed = 4096;

struct Segment {
    std::uint32_t type = 0;
    std::uint64_t offset = 0;
    std::uint64_t vaddr = 0;
    std::uint64_t filesz = 0;
};

struct Section {
    std::uint32_t name = 0;
    std::uint32_t type = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::uint32_t link = 0;
};

struct Header {
    int bits = 0;
    Endian endian = Endian::little;
    std::uint64_t phoff = 0, shoff = 0;
    std::uint16_t phentsize = 0, shentsize = 0;
    std::uint64_t phnum = 0, shnum = 0;
    std::uint16_t shstrndx = 0;
};

// Reads an address-sized field (4 bytes in ELFCLASS32, 8 in ELFCLASS64).
std::optional<std::uint64_t> word(const ByteView& v, std::uint64_t off, const Header& h) {
    if (h.bits == 32) {
        auto x = v.u32(off, h.endian);
        if (!x) return std::nullopt;
        return *x;
    }
    return v.u64(off, h.endian);
}

std::optional<std::vector<Section>> read_sections(const ByteSource& src, const Header& h,
                                                  std::string& error) {
    std::vector<Section> out;
    if (h.shoff == 0 || h.shnum == 0) return out;
    const std::uint64_t min_size = h.bits == 32 ? 40 : 64;
    if (h.shentsize < min_size) {
        error = "section header entry size " + std::to_string(h.shentsize) + " is too small";
        return std::nullopt;
    }
    if (h.shnum > max_headers) {
        error = "too many section headers";
        return std::nullopt;
    }
    auto table = src.read(h.shoff, h.shnum * h.shentsize);
    if (!table) {
        error = "section header table lies outside the file";
        return std::nullopt;
    }
    ByteView v(table->data(), table->size());
    for (std::uint64_t i = 0; i < h.shnum; ++i) {
        const std::uint64_t base = i * h.shentsize;
        Section s;
        auto name = v.u32(base, h.endian);
        auto type = v.u32(base + 4, h.endian);
        auto offset = word(v, base + (h.bits == 32 ? 16 : 24), h);
        auto size = word(v, base + (h.bits == 32 ? 20 : 32), h);
        auto link = v.u32(base + (h.bits == 32 ? 24 : 40), h.endian);
        if (!name || !type || !offset || !size || !link) break;
        s.name = *name;
        s.type = *type;
        s.offset = *offset;
        s.size = *size;
        s.link = *link;
        out.push_back(s);
    }
    return out;
}

std::optional<std::string> read_string(const ByteSource& src, std::uint64_t table_offset,
                                       std::uint64_t table_size, std::uint64_t index) {
    if (index >= table_size) return std::nullopt;
    // Most names are short: try a small read first, then the longest name allowed.
    for (std::uint64_t chunk : {std::uint64_t{256}, max_string + 1}) {
        const std::uint64_t available = std::min<std::uint64_t>(table_size - index, chunk);
        auto bytes = src.read_up_to(table_offset + index, available);
        if (!bytes) return std::nullopt;
        ByteView v(bytes->data(), bytes->size());
        if (auto text = v.c_string(0, max_string)) return text;
        if (available < chunk) return std::nullopt; // the table ended before a terminator
    }
    return std::nullopt;
}

} // namespace

std::string elf_machine_name(std::uint16_t machine) {
    switch (machine) {
    case elf::em_386:
        return "i386";
    case elf::em_ppc:
        return "ppc";
    case elf::em_ppc64:
        return "ppc64";
    case elf::em_s390:
        return "s390";
    case elf::em_arm:
        return "arm";
    case elf::em_x86_64:
        return "x86_64";
    case elf::em_aarch64:
        return "aarch64";
    case elf::em_riscv:
        return "riscv";
    default:
        return "machine " + std::to_string(machine);
    }
}

std::string ElfInfo::machine_name() const {
    return elf_machine_name(machine);
}

std::vector<std::string> split_search_path(const std::string& value, bool semicolons) {
    std::vector<std::string> out;
    std::string current;
    for (char c : value) {
        if (c == ':' || (semicolons && c == ';')) {
            out.push_back(current);
            current.clear();
        } else {
            current.push_back(c);
        }
    }
    out.push_back(current);
    return out;
}

std::vector<std::string> ElfInfo::rpath_entries() const {
    return rpath ? split_search_path(*rpath) : std::vector<std::string>{};
}
std::vector<std::string> ElfInfo::runpath_entries() const {
    return runpath ? split_search_path(*runpath) : std::vector<std::string>{};
}

bool looks_like_elf(ByteView bytes) {
    return bytes.starts_with(0,
                             "\x7f"
                             "ELF",
                             4);
}

// The ELF header of `ident` (the file's first 64 bytes, or fewer); nullopt with `error` set when
// it is not one this reader understands.
std::optional<Header> parse_header(const ByteView& ident, std::string& error) {
    if (ident.size() < 16) {
        error = "file is too short to be an ELF file";
        return std::nullopt;
    }
    if (!looks_like_elf(ident)) {
        error = "not an ELF file (no \\x7fELF magic)";
        return std::nullopt;
    }
    Header h;
    const std::uint8_t cls = *ident.u8(4);
    const std::uint8_t data = *ident.u8(5);
    if (cls == 1)
        h.bits = 32;
    else if (cls == 2)
        h.bits = 64;
    else {
        error = "unknown ELF class " + std::to_string(cls);
        return std::nullopt;
    }
    if (data == 1)
        h.endian = Endian::little;
    else if (data == 2)
        h.endian = Endian::big;
    else {
        error = "unknown ELF byte order " + std::to_string(data);
        return std::nullopt;
    }
    const std::uint64_t header_size = h.bits == 32 ? 52 : 64;
    if (ident.size() < header_size) {
        error = "ELF header is truncated";
        return std::nullopt;
    }
    if (h.bits == 32) {
        h.phoff = *ident.u32(28, h.endian);
        h.shoff = *ident.u32(32, h.endian);
        h.phentsize = *ident.u16(42, h.endian);
        h.phnum = *ident.u16(44, h.endian);
        h.shentsize = *ident.u16(46, h.endian);
        h.shnum = *ident.u16(48, h.endian);
        h.shstrndx = *ident.u16(50, h.endian);
    } else {
        h.phoff = *ident.u64(32, h.endian);
        h.shoff = *ident.u64(40, h.endian);
        h.phentsize = *ident.u16(54, h.endian);
        h.phnum = *ident.u16(56, h.endian);
        h.shentsize = *ident.u16(58, h.endian);
        h.shnum = *ident.u16(60, h.endian);
        h.shstrndx = *ident.u16(62, h.endian);
    }
    return h;
}

ElfReadResult read_elf(const ByteSource& src) {
    ElfReadResult result;
    auto ident_bytes = src.read_up_to(0, 64);
    ByteView ident = ident_bytes ? ByteView(ident_bytes->data(), ident_bytes->size()) : ByteView();
    auto header = parse_header(ident, result.error);
    if (!header) return result;
    Header h = *header;

    ElfInfo info;
    info.bits = h.bits;
    info.endian = h.endian;
    info.os_abi = *ident.u8(7);
    info.type = *ident.u16(16, h.endian);
    info.machine = *ident.u16(18, h.endian);

    // Sections are only needed for extended numbering and as a fallback; read them lazily.
    std::optional<std::vector<Section>> sections;
    std::string section_error;
    auto load_sections = [&]() -> const std::vector<Section>* {
        if (!sections) {
            sections = read_sections(src, h, section_error);
            if (!sections) {
                info.warnings.push_back(section_error);
                sections = std::vector<Section>{};
            }
        }
        return &*sections;
    };
    // Extended numbering: the real program header count lives in section 0's sh_info.
    if (h.phnum == 0xffff) {
        const std::uint64_t min_size = h.bits == 32 ? 40 : 64;
        std::optional<std::uint32_t> real;
        if (h.shoff != 0 && h.shentsize >= min_size) {
            if (auto s0 = src.read(h.shoff, min_size))
                real = ByteView(s0->data(), s0->size()).u32(h.bits == 32 ? 28 : 44, h.endian);
        }
        if (!real) {
            result.error =
                "program header count uses extended numbering but section 0 is unreadable";
            return result;
        }
        h.phnum = *real;
    }

    std::vector<Segment> segments;
    if (h.phoff != 0 && h.phnum != 0) {
        const std::uint64_t min_size = h.bits == 32 ? 32 : 56;
        if (h.phentsize < min_size) {
            result.error =
                "program header entry size " + std::to_string(h.phentsize) + " is too small";
            return result;
        }
        if (h.phnum > max_headers) {
            result.error = "too many program headers (" + std::to_string(h.phnum) + ")";
            return result;
        }
        auto table = src.read(h.phoff, h.phnum * h.phentsize);
        if (!table) {
            result.error = "program header table lies outside the file";
            return result;
        }
        ByteView v(table->data(), table->size());
        for (std::uint64_t i = 0; i < h.phnum; ++i) {
            const std::uint64_t b = i * h.phentsize;
            Segment s;
            s.type = *v.u32(b, h.endian);
            if (h.bits == 32) {
                s.offset = *v.u32(b + 4, h.endian);
                s.vaddr = *v.u32(b + 8, h.endian);
                s.filesz = *v.u32(b + 16, h.endian);
            } else {
                s.offset = *v.u64(b + 8, h.endian);
                s.vaddr = *v.u64(b + 16, h.endian);
                s.filesz = *v.u64(b + 32, h.endian);
            }
            segments.push_back(s);
        }
    }

    for (const auto& s : segments) {
        if (s.type != pt_interp) continue;
        if (auto text = read_string(src, s.offset, s.filesz, 0))
            info.interpreter = *text;
        else
            info.warnings.push_back("PT_INTERP lies outside the file");
        break;
    }

    // Locate the dynamic table: PT_DYNAMIC, else an SHT_DYNAMIC section.
    std::optional<std::uint64_t> dyn_offset, dyn_size;
    std::optional<std::uint64_t> section_strtab_offset, section_strtab_size;
    for (const auto& s : segments) {
        if (s.type == pt_dynamic) {
            dyn_offset = s.offset;
            dyn_size = s.filesz;
            break;
        }
    }
    if (!dyn_offset) {
        const auto* secs = load_sections();
        for (const auto& s : *secs) {
            if (s.type != sht_dynamic) continue;
            dyn_offset = s.offset;
            dyn_size = s.size;
            if (s.link < secs->size()) {
                section_strtab_offset = (*secs)[s.link].offset;
                section_strtab_size = (*secs)[s.link].size;
            }
            break;
        }
    }
    if (!dyn_offset) {
        result.info = std::move(info); // static executable or object file: no dynamic facts
        return result;
    }
    info.has_dynamic = true;

    const std::uint64_t entry_size = h.bits == 32 ? 8 : 16;
    std::uint64_t bytes = std::min<std::uint64_t>(*dyn_size, max_dynamic_bytes);
    bytes -= bytes % entry_size;
    auto dyn = src.read_up_to(*dyn_offset, bytes);
    if (!dyn) {
        info.warnings.push_back("dynamic table lies outside the file");
        result.info = std::move(info);
        return result;
    }
    if (dyn->size() < bytes) info.warnings.push_back("dynamic table is truncated");
    ByteView dv(dyn->data(), dyn->size());

    struct Entry {
        std::uint64_t tag, value;
    };
    std::vector<Entry> entries;
    std::optional<std::uint64_t> strtab_addr, strsz;
    for (std::uint64_t off = 0; off + entry_size <= dv.size(); off += entry_size) {
        const std::uint64_t tag = *word(dv, off, h);
        const std::uint64_t value = *word(dv, off + entry_size / 2, h);
        if (tag == dt_null) break;
        // ld.so keeps the last entry of each tag (it fills l_info[tag] in order).
        if (tag == dt_strtab)
            strtab_addr = value;
        else if (tag == dt_strsz)
            strsz = value;
        else if (tag == dt_flags_1)
            info.nodeflib = (value & df_1_nodeflib) != 0;
        entries.push_back({tag, value});
    }

    // DT_STRTAB holds a virtual address: map it to a file offset through the PT_LOAD segments.
    std::optional<std::uint64_t> str_offset, str_size;
    if (strtab_addr) {
        for (const auto& s : segments) {
            if (s.type != pt_load) continue;
            if (*strtab_addr >= s.vaddr && *strtab_addr - s.vaddr < s.filesz) {
                const std::uint64_t delta = *strtab_addr - s.vaddr;
                str_offset = s.offset + delta;
                // The table cannot extend past its segment's bytes in the file.
                str_size =
                    std::min<std::uint64_t>(strsz.value_or(s.filesz - delta), s.filesz - delta);
                break;
            }
        }
    }
    if (!str_offset && section_strtab_offset) {
        str_offset = section_strtab_offset;
        str_size = section_strtab_size;
    }
    if (!str_offset) {
        // Last resort: the string table linked from the SHT_DYNAMIC section.
        const auto* secs = load_sections();
        for (const auto& s : *secs) {
            if (s.type == sht_dynamic && s.link < secs->size()) {
                str_offset = (*secs)[s.link].offset;
                str_size = (*secs)[s.link].size;
                break;
            }
        }
    }
    bool wants_strings = false;
    for (const auto& e : entries)
        if (e.tag == dt_needed || e.tag == dt_soname || e.tag == dt_rpath || e.tag == dt_runpath)
            wants_strings = true;
    if (!str_offset || !str_size) {
        if (wants_strings) info.warnings.push_back("dynamic string table not found");
        result.info = std::move(info);
        return result;
    }
    if (*str_offset > src.size()) {
        info.warnings.push_back("dynamic string table lies outside the file");
        result.info = std::move(info);
        return result;
    }
    const std::uint64_t table_size = std::min<std::uint64_t>(*str_size, src.size() - *str_offset);

    for (const auto& e : entries) {
        const char* what = nullptr;
        switch (e.tag) {
        case dt_needed:
            what = "DT_NEEDED";
            break;
        case dt_soname:
            what = "DT_SONAME";
            break;
        case dt_rpath:
            what = "DT_RPATH";
            break;
        case dt_runpath:
            what = "DT_RUNPATH";
            break;
        default:
            continue;
        }
        auto text = read_string(src, *str_offset, table_size, e.value);
        if (!text) {
            info.warnings.push_back(std::string(what) + " string at " + std::to_string(e.value) +
                                    " is outside the string table");
            continue;
        }
        switch (e.tag) {
        case dt_needed:
            if (info.needed.size() < max_needed) info.needed.push_back(*text);
            break;
        case dt_soname: // the last entry of a tag wins, as in ld.so
            info.soname = *text;
            break;
        case dt_rpath:
            info.rpath = *text;
            break;
        case dt_runpath:
            info.runpath = *text;
            break;
        default:
            break;
        }
    }
    result.info = std::move(info);
    return result;
}

std::vector<ElfSection> read_elf_sections(const ByteSource& src) {
    std::vector<ElfSection> out;
    auto bytes = src.read_up_to(0, 64);
    if (!bytes) return out;
    std::string error;
    auto h = parse_header(ByteView(bytes->data(), bytes->size()), error);
    if (!h) return out;
    auto sections = read_sections(src, *h, error);
    if (!sections) return out;
    const Section* names = h->shstrndx < sections->size() ? &(*sections)[h->shstrndx] : nullptr;
    for (const auto& s : *sections) {
        ElfSection e;
        if (names)
            if (auto n = read_string(src, names->offset, names->size, s.name)) e.name = *n;
        e.type = s.type;
        e.offset = s.offset;
        e.size = s.size;
        out.push_back(std::move(e));
    }
    return out;
}

ElfReadResult read_elf(ByteView bytes) {
    return read_elf(MemorySource(bytes));
}

ElfReadResult read_elf_file(const std::string& path) {
    auto src = FileSource::open(path);
    if (!src) {
        ElfReadResult r;
        r.error = path + ": cannot open the file";
        return r;
    }
    auto r = read_elf(*src);
    if (!r) r.error = path + ": " + r.error;
    return r;
}

} // namespace cvm::binary
