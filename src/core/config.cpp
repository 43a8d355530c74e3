#include "core/config.h"

#include <toml++/toml.h>

#include "core/toml_input.h"
#include "platform/platform.h"

namespace cvm {

std::vector<fs::path> config_files() {
    std::vector<fs::path> out;
    // The default folder is only worked out when the variable is unset (the shim runs this).
    auto pick = [&](const char* variable, fs::path (*fallback)()) {
        if (auto v = platform::get_env(variable)) {
            if (!v->empty()) out.push_back(fs::u8path(*v));
        } else {
            out.push_back(fallback() / "cvm" / "config.toml");
        }
    };
    pick("CVM_CONFIG", platform::user_config_dir);
    pick("CVM_SYSTEM_CONFIG", platform::system_config_dir);
    return out;
}

Config parse_config(const std::string& text, const std::string& origin) {
    auto fail = [&](const toml::source_region& at, const std::string& why) {
        return ConfigError(origin + ":" + std::to_string(at.begin.line) + ": " + why);
    };
    toml::table root = parse_toml<ConfigError>(
        text, origin, "; fix the file (it is TOML; only quoted folder names may hold letters beyond ASCII)");
    Config config;
    for (const auto& [key, node] : root) {
        if (key.str() == "host_compiler") {
            const auto* s = node.as_string();
            if (!s || (s->get() != "auto" && s->get() != "off"))
                throw fail(node.source(), "host_compiler must be \"auto\" or \"off\"");
            config.host_compiler = s->get();
            continue;
        }
        if (key.str() != "store_path")
            throw fail(key.source(), "unknown setting '" + std::string(key.str()) +
                                         "'; the ones cvm knows are store_path and host_compiler");
        const toml::array* list = node.as_array();
        if (!list)
            throw fail(node.source(), "store_path must be a list of folders, like store_path = [\"/nfs/cvm\"]");
        for (const toml::node& item : *list) {
            const auto* s = item.as_string();
            if (!s || s->get().empty())
                throw fail(item.source(), "store_path must hold folder names in quotes");
            std::string value = s->get();
            fs::path p = value.rfind("~/", 0) == 0 ? platform::home_dir() / fs::u8path(value.substr(2))
                                                   : fs::u8path(value);
            if (!p.is_absolute())
                throw fail(item.source(), "store_path folder '" + value +
                                              "' is relative; give the whole path");
            config.store_path.push_back(p.lexically_normal());
        }
    }
    return config;
}

Config read_config_file(const fs::path& file) {
    auto text = platform::read_file(file, 1 << 20);
    return text ? parse_config(*text, file.u8string()) : Config{};
}

} // namespace cvm
