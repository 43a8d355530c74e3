#include "config/config_files.h"

#include "platform/platform.h"

namespace cvm {

std::optional<fs::path> machine_config_file() {
    if (auto v = platform::get_env("CVM_SYSTEM_CONFIG"))
        return v->empty() ? std::nullopt : std::optional<fs::path>(fs::u8path(*v));
    return platform::system_config_dir() / "cvm" / "config.toml";
}

bool is_machine_config_file(const fs::path& file) {
    auto machine = machine_config_file();
    return machine && file == *machine;
}

std::vector<fs::path> config_files() {
    std::vector<fs::path> out;
    // The default folder is only worked out when the variable is unset (the shim runs this).
    if (auto v = platform::get_env("CVM_CONFIG")) {
        if (!v->empty()) out.push_back(fs::u8path(*v));
    } else if (auto dir = platform::user_config_dir_if_any()) {
        out.push_back(*dir / "cvm" / "config.toml");
    }
    if (auto machine = machine_config_file()) out.push_back(*machine);
    return out;
}

} // namespace cvm
