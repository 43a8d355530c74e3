#include "binary/elf_version_symbol.h"

#include <cstring>
#include <vector>

namespace cvm::binary {

std::optional<std::array<unsigned, 3>> decode_cudnn_version_number(std::uint32_t v) {
    unsigned major = (v >> 16) & 0xff, minor = (v >> 8) & 0xff, patch = v & 0xff;
    if ((v >> 24) == 0 && major >= 7 && major <= 30)
        return std::array<unsigned, 3>{major, minor, patch};
    // Decimal forms: CUDNN_VERSION of cuDNN 8 (8902) and 9 (91900).
    if (v >= 10000 && v < 1000000)
        return std::array<unsigned, 3>{v / 10000, (v / 100) % 100, v % 100};
    if (v >= 7000 && v < 10000) return std::array<unsigned, 3>{v / 1000, (v / 100) % 10, v % 100};
    return std::nullopt;
}

std::string RawVersionSymbol::text() const {
    return std::to_string(version[0]) + "." + std::to_string(version[1]) + "." +
           std::to_string(version[2]);
}

namespace {

struct Reader {
    const ByteSource& src;
    bool little = true;
    std::optional<std::uint64_t> u(std::uint64_t off, unsigned size) const {
        auto b = src.read(off, size);
        if (!b) return std::nullopt;
        std::uint64_t v = 0;
        for (unsigned i = 0; i < size; ++i) {
            unsigned idx = little ? size - 1 - i : i;
            v = (v << 8) | (*b)[idx];
        }
        return v;
    }
};

struct SectionHeader {
    std::uint32_t type = 0, link = 0;
    std::uint64_t addr = 0, offset = 0, size = 0, entsize = 0;
};

} // namespace

std::optional<RawVersionSymbol> read_cudnn_version_symbol(const ByteSource& file) {
    auto ident = file.read(0, 16);
    if (!ident || std::memcmp(ident->data(),
                              "\x7f"
                              "ELF",
                              4) != 0)
        return std::nullopt;
    const bool is64 = (*ident)[4] == 2;
    Reader r{file, (*ident)[5] != 2};
    auto shoff = r.u(is64 ? 0x28 : 0x20, is64 ? 8 : 4);
    auto shentsize = r.u(is64 ? 0x3a : 0x2e, 2);
    auto shnum = r.u(is64 ? 0x3c : 0x30, 2);
    if (!shoff || !shentsize || !shnum || *shnum == 0 || *shnum > 4096 ||
        *shentsize < (is64 ? 64u : 40u))
        return std::nullopt;
    std::vector<SectionHeader> sections;
    for (std::uint64_t i = 0; i < *shnum; ++i) {
        std::uint64_t at = *shoff + i * *shentsize;
        SectionHeader s;
        auto type = r.u(at + 4, 4);
        auto link = r.u(at + (is64 ? 0x28 : 0x18), 4);
        auto addr = r.u(at + (is64 ? 0x10 : 0x0c), is64 ? 8 : 4);
        auto off = r.u(at + (is64 ? 0x18 : 0x10), is64 ? 8 : 4);
        auto size = r.u(at + (is64 ? 0x20 : 0x14), is64 ? 8 : 4);
        auto ent = r.u(at + (is64 ? 0x38 : 0x24), is64 ? 8 : 4);
        if (!type || !link || !addr || !off || !size || !ent) return std::nullopt;
        s.type = static_cast<std::uint32_t>(*type);
        s.link = static_cast<std::uint32_t>(*link);
        s.addr = *addr, s.offset = *off, s.size = *size, s.entsize = *ent;
        sections.push_back(s);
    }
    const std::uint32_t kDynsym = 11, kNobits = 8;
    for (const auto& dynsym : sections) {
        if (dynsym.type != kDynsym || dynsym.link >= sections.size()) continue;
        const SectionHeader& strtab = sections[dynsym.link];
        if (strtab.size > (std::uint64_t(64) << 20) || dynsym.size > (std::uint64_t(64) << 20))
            return std::nullopt;
        auto names = file.read(strtab.offset, strtab.size);
        auto syms = file.read(dynsym.offset, dynsym.size);
        if (!names || !syms) return std::nullopt;
        const std::uint64_t ent = is64 ? 24 : 16;
        MemorySource table(ByteView(syms->data(), syms->size()));
        Reader t{table, r.little};
        for (std::uint64_t at = 0; at + ent <= syms->size(); at += ent) {
            auto name_off = t.u(at, 4);
            auto info = t.u(at + (is64 ? 4 : 12), 1);
            auto shndx = t.u(at + (is64 ? 6 : 14), 2);
            auto value = t.u(at + (is64 ? 8 : 4), is64 ? 8 : 4);
            auto size = t.u(at + (is64 ? 16 : 8), is64 ? 8 : 4);
            if (!name_off || !info || !shndx || !value || !size) break;
            if ((*info & 0xf) != 1 /* STT_OBJECT */ || *size != 4 || *shndx == 0 ||
                *shndx >= sections.size() || *name_off >= names->size())
                continue;
            const char* begin = reinterpret_cast<const char*>(names->data()) + *name_off;
            std::string name(begin, strnlen(begin, names->size() - *name_off));
            if (name.compare(0, 5, "cudnn") != 0 || name.size() < 8 ||
                name.compare(name.size() - 8, 8, "_version") != 0)
                continue;
            const SectionHeader& home = sections[*shndx];
            if (home.type == kNobits || *value < home.addr || *value + 4 > home.addr + home.size)
                continue;
            auto raw = r.u(home.offset + (*value - home.addr), 4);
            if (!raw) continue;
            if (auto v = decode_cudnn_version_number(static_cast<std::uint32_t>(*raw)))
                return RawVersionSymbol{name, *v};
        }
    }
    return std::nullopt;
}

std::optional<RawVersionSymbol> read_cudnn_version_symbol_file(const std::string& path) {
    auto src = FileSource::open(path);
    if (!src) return std::nullopt;
    return read_cudnn_version_symbol(*src);
}

} // namespace cvm::binary
