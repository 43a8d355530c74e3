// The installed-files record (<entry>/files): any bytes give a list or a std::runtime_error
// naming the file; a parsed record written back parses to the same list.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "install/installed_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        auto files = cvm::parse_installed_files(text, "fuzz/files");
        auto again = cvm::parse_installed_files(cvm::serialize_installed_files(files), "rewritten");
        if (again.size() != files.size()) __builtin_trap();
        for (std::size_t i = 0; i < files.size(); ++i)
            if (again[i].type != files[i].type || again[i].path != files[i].path ||
                again[i].size != files[i].size || again[i].sha256 != files[i].sha256 ||
                again[i].target != files[i].target || again[i].mode != files[i].mode)
                __builtin_trap(); // what cvm writes, cvm must read
    } catch (const std::runtime_error&) {
    }
    return 0;
}
