// cvm.lock parsing: any bytes give a Lockfile or a std::runtime_error naming the file; a parsed
// lockfile written back parses again.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "project/lockfile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        cvm::Lockfile lock = cvm::parse_lockfile(text, "fuzz.lock");
        std::string written = cvm::format_lockfile(lock);
        try {
            cvm::parse_lockfile(written, "rewritten.lock");
        } catch (const std::exception&) {
            __builtin_trap(); // what cvm writes, cvm must read
        }
    } catch (const std::exception&) {
    }
    return 0;
}
