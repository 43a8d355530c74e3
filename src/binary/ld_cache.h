#pragma once
// A reader for glibc's binary /etc/ld.so.cache: the new format ("glibc-ld.so.cache1.1",
// glibc 2.32 and later) alone or behind the old "ld.so-1.7.0" table (older glibc writes both).

#include "binary/byte_source.h"
#include "binary/elf_reader.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cvm::binary {

struct LdCacheEntry {
    std::string name; // the soname, e.g. "libcudnn.so.9"
    std::string path; // the file ld.so opens, e.g. "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
    std::int32_t flags = 0;
    std::uint64_t hwcap = 0;

    // The ABI the entry was recorded for (ldconfig sets it from the library's ELF header).
    bool matches(const ElfInfo& requester) const;
    std::string abi_name() const; // "x86-64", "i386", "aarch64", ...
};

struct LdCache {
    std::vector<LdCacheEntry> entries; // in file order (ldconfig sorts them for ld.so's search)
    std::vector<std::string> warnings;

    // Every entry for `soname`, in file order.
    std::vector<const LdCacheEntry*> find(const std::string& soname) const;
};

struct LdCacheReadResult {
    std::optional<LdCache> cache;
    std::string error;
    explicit operator bool() const { return cache.has_value(); }
};

LdCacheReadResult read_ld_cache(ByteView bytes);
LdCacheReadResult read_ld_cache_file(const std::string& path);

// The cache flags ld.so accepts for a requester of this class and machine (the
// `_DL_CACHE_DEFAULT_ID` of that architecture), or nullopt for an architecture this reader does not
// know.
std::optional<std::int32_t> ld_cache_flags_for(const ElfInfo& requester);

} // namespace cvm::binary
