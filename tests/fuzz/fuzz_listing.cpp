// Folder listings and release names from a mirror (registry/index_listing.h): whatever the bytes,
// every entry is a plain name inside the folder (no "/" but a folder's last one, no leading dot,
// at most 200 characters), and the name parsers never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "registry/index_listing.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    for (const auto& e : cvm::registry::listing_entries(text, "https://example.com/compute/cuda/redist/", 500)) {
        const std::string& n = e.name;
        if (n.empty() || n.size() > 201 || n.front() == '.') __builtin_trap();
        auto slash = n.find('/');
        if (slash != std::string::npos && slash + 1 != n.size()) __builtin_trap();
        if (!e.month.empty() && e.month.size() != 7) __builtin_trap();
        cvm::registry::manifest_version(n);
        cvm::registry::legacy_folder_version(n);
        cvm::registry::legacy_archive(n);
    }
    cvm::registry::manifest_version(text);
    cvm::registry::legacy_archive(text);
    return 0;
}
