#include "binary/ld_cache.h"

namespace cvm::binary {

namespace {

constexpr char old_magic[] = "ld.so-1.7.0";
constexpr std::size_t old_magic_size = 11;
constexpr char new_magic[] = "glibc-ld.so.cache1.1";
constexpr std::size_t new_magic_size = 20;
constexpr std::size_t new_header_size = 48;
constexpr std::size_t new_entry_size = 24;
constexpr std::size_t old_entry_size = 12;
constexpr std::uint64_t max_cache_file = 256ull << 20;

// glibc's ldconfig.h: the low byte is the library type, the high byte the ABI.
constexpr std::int32_t flag_elf = 0x0001;
constexpr std::int32_t flag_elf_libc6 = 0x0003;
constexpr std::int32_t flag_required_mask = 0xff00;

struct AbiFlag {
    std::int32_t flag;
    const char* name;
};
constexpr AbiFlag abi_flags[] = {
    {0x0000, "i386/32-bit"},   {0x0100, "sparc64"},     {0x0200, "ia64"},
    {0x0300, "x86-64"},        {0x0400, "s390x"},       {0x0500, "ppc64"},
    {0x0600, "mips64-n32"},    {0x0700, "mips64-n64"},  {0x0800, "x32"},
    {0x0900, "arm-hardfloat"}, {0x0a00, "aarch64"},     {0x0b00, "arm-softfloat"},
    {0x0f00, "riscv-soft"},    {0x1000, "riscv-double"}};

} // namespace

std::optional<std::int32_t> ld_cache_flags_for(const ElfInfo& requester) {
    const std::int32_t libc6 = flag_elf_libc6;
    switch (requester.machine) {
    case elf::em_x86_64:
        return libc6 | (requester.bits == 64 ? 0x0300 : 0x0800);
    case elf::em_386:
        return libc6;
    case elf::em_aarch64:
        return libc6 | 0x0a00;
    case elf::em_ppc64:
        return libc6 | 0x0500;
    case elf::em_s390:
        return libc6 | (requester.bits == 64 ? 0x0400 : 0);
    case elf::em_arm:
        return libc6 | 0x0900; // hard-float, what every current distribution uses
    case elf::em_riscv:
        return libc6 | 0x1000;
    case elf::em_ppc:
        return libc6;
    default:
        return std::nullopt;
    }
}

bool LdCacheEntry::matches(const ElfInfo& requester) const {
    auto wanted = ld_cache_flags_for(requester);
    if (!wanted) return true; // unknown architecture: do not pretend to know better than ld.so
    if (flags == *wanted) return true;
    // 32-bit i386 ld.so also accepts plain FLAG_ELF entries.
    return requester.machine == elf::em_386 && flags == flag_elf;
}

std::string LdCacheEntry::abi_name() const {
    const std::int32_t abi = flags & flag_required_mask;
    for (const auto& a : abi_flags)
        if (a.flag == abi) return a.name;
    return "flags " + std::to_string(flags);
}

std::vector<const LdCacheEntry*> LdCache::find(const std::string& soname) const {
    std::vector<const LdCacheEntry*> out;
    for (const auto& e : entries)
        if (e.name == soname) out.push_back(&e);
    return out;
}

LdCacheReadResult read_ld_cache(ByteView bytes) {
    LdCacheReadResult result;
    std::uint64_t new_at = 0;
    if (bytes.starts_with(0, old_magic, old_magic_size)) {
        // Old table first: magic (padded to 12), count, 12-byte entries; the new table follows,
        // aligned. Only the new table carries the information ld.so uses today.
        auto count = bytes.le32(12);
        if (!count) {
            result.error = "ld.so.cache: truncated old-format header";
            return result;
        }
        const std::uint64_t end = 16 + static_cast<std::uint64_t>(*count) * old_entry_size;
        bool found = false;
        for (std::uint64_t align : {8u, 4u}) {
            const std::uint64_t at = (end + align - 1) & ~(align - 1);
            if (bytes.starts_with(at, new_magic, new_magic_size)) {
                new_at = at;
                found = true;
                break;
            }
        }
        if (!found) {
            result.error =
                "ld.so.cache: old format only, without the glibc-ld.so.cache1.1 table ld.so reads";
            return result;
        }
    } else if (!bytes.starts_with(0, new_magic, new_magic_size)) {
        result.error = "ld.so.cache: unknown format (no glibc-ld.so.cache1.1 magic)";
        return result;
    }

    auto cache = bytes.slice(new_at, bytes.size() - new_at);
    if (!cache || cache->size() < new_header_size) {
        result.error = "ld.so.cache: truncated header";
        return result;
    }
    // Byte 28 records the byte order ldconfig wrote (2 little, 3 big; 0 for old ldconfig = host).
    const std::uint8_t endian_flag = *cache->u8(28) & 3;
    const Endian e = endian_flag == 3 ? Endian::big : Endian::little;
    const std::uint32_t count = *cache->u32(20, e);
    const std::uint32_t strings_length = *cache->u32(24, e);
    const std::uint64_t table_end =
        new_header_size + static_cast<std::uint64_t>(count) * new_entry_size;
    LdCache out;
    if (table_end > cache->size()) {
        result.error = "ld.so.cache: " + std::to_string(count) + " entries do not fit in the file";
        return result;
    }
    (void)strings_length; // string offsets are checked against the file itself
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint64_t at = new_header_size + static_cast<std::uint64_t>(i) * new_entry_size;
        LdCacheEntry entry;
        entry.flags = static_cast<std::int32_t>(*cache->u32(at, e));
        const std::uint32_t key = *cache->u32(at + 4, e);
        const std::uint32_t value = *cache->u32(at + 8, e);
        entry.hwcap = *cache->u64(at + 16, e);
        auto name = cache->c_string(key, 4096);
        auto path = cache->c_string(value, 4096);
        if (!name || !path) {
            out.warnings.push_back("ld.so.cache entry " + std::to_string(i) +
                                   " points outside the string table");
            continue;
        }
        entry.name = *name;
        entry.path = *path;
        out.entries.push_back(std::move(entry));
    }
    result.cache = std::move(out);
    return result;
}

LdCacheReadResult read_ld_cache_file(const std::string& path) {
    LdCacheReadResult result;
    auto src = FileSource::open(path);
    if (!src) {
        result.error = path + ": cannot open the loader cache";
        return result;
    }
    if (src->size() > max_cache_file) {
        result.error = path + ": loader cache is implausibly large";
        return result;
    }
    auto bytes = src->read(0, src->size());
    if (!bytes) {
        result.error = path + ": cannot read the loader cache";
        return result;
    }
    result = read_ld_cache(ByteView(bytes->data(), bytes->size()));
    if (!result) result.error = path + ": " + result.error;
    return result;
}

} // namespace cvm::binary
