// libFuzzer target for the ELF reader (and the ld.so.cache reader, which shares its input
// handling): any byte string must give a result or an error, never a crash or a leak.
#include "binary/elf_reader.h"
#include "binary/ld_cache.h"
#include "doctor/linux_loader.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace cvm::binary;
    const ByteView bytes(data, size);
    auto elf = read_elf(bytes);
    if (elf) {
        // Exercise what the loader emulation does with the strings it read.
        for (const auto& entry : elf.info->runpath_entries())
            (void)cvm::doctor::expand_dynamic_string_tokens(entry, "/origin", "lib64", "x86_64");
        for (const auto& entry : elf.info->rpath_entries())
            (void)cvm::doctor::expand_dynamic_string_tokens(entry, "/origin", "lib64", "x86_64");
        (void)elf.info->machine_name();
    }
    (void)read_elf_sections(MemorySource(bytes));
    auto cache = read_ld_cache(bytes);
    if (cache) {
        for (const auto& e : cache.cache->entries)
            (void)e.abi_name();
    }
    return 0;
}
