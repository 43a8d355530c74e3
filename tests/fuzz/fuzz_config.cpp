// config.toml parsing: any bytes give a Config or a ConfigError; every store folder it gives is
// absolute.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        cvm::Config c = cvm::parse_config(text, "fuzz.toml");
        for (const auto& p : c.store_path)
            if (!p.is_absolute()) __builtin_trap();
    } catch (const cvm::ConfigError&) {
    }
    return 0;
}
