#pragma once
// Reader for glibc's loader cache (/etc/ld.so.cache, "glibc-ld.so.cache1.1" format), so that a
// failed load can say what the cache offers under a similar name.

#include <cstdint>
#include <string>
#include <vector>

namespace cvm::probe {

struct LdCacheEntry {
    std::string name; // e.g. libcudnn.so.9
    std::string path; // e.g. /usr/lib/x86_64-linux-gnu/libcudnn.so.9
};

// Parses the bytes of a loader cache. Accepts the new format alone or after the old
// "ld.so-1.7.0" section; anything malformed yields the entries read so far (never throws).
std::vector<LdCacheEntry> parse_ld_cache(const std::vector<std::uint8_t>& bytes);

} // namespace cvm::probe
