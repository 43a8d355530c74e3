#include "config/config.h"

#include <toml++/toml.h>

#include "config/download_table.h"
#include "config/folder_chain.h"
#include "text/toml_input.h"
#include "config/trust.h"
#include "platform/platform.h"

namespace cvm {

std::vector<std::string> machine_trusted_owners() {
    auto file = machine_config_file();
    return file ? read_config_file(*file).trusted_owners : std::vector<std::string>();
}

Config parse_config(const std::string& text, const std::string& origin) {
    auto fail = [&](const toml::source_region& at, const std::string& why) {
        return ConfigError(origin + ":" + std::to_string(at.begin.line) + ": " + why);
    };
    toml::table root = parse_toml<ConfigError>(
        text, origin,
        "; fix the file (it is TOML; only quoted folder names may hold letters beyond ASCII)");
    Config config;
    for (const auto& [key, node] : root) {
        if (key.str() == "download") {
            config.download = parse_download_table(node, origin);
            continue;
        }
        if (key.str() == "trusted_owners") {
            const toml::array* owners = node.as_array();
            if (!owners)
                throw fail(node.source(),
                           "trusted_owners must be a list of user names or uids, like "
                           "trusted_owners = [\"cudaadmin\", 1234]");
            for (const toml::node& item : *owners) {
                if (const auto* n = item.as_integer();
                    n && n->get() >= 0 && n->get() <= 0xffffffffLL)
                    config.trusted_owners.push_back(std::to_string(n->get()));
                else if (const auto* s = item.as_string(); s && !s->get().empty())
                    config.trusted_owners.push_back(s->get());
                else
                    throw fail(item.source(),
                               "trusted_owners must hold user names in quotes or uids");
            }
            continue;
        }
        if (key.str() == "host_compiler") {
            const auto* s = node.as_string();
            if (!s || (s->get() != "auto" && s->get() != "off"))
                throw fail(node.source(), "host_compiler must be \"auto\" or \"off\"");
            config.host_compiler = s->get();
            continue;
        }
        if (key.str() != "store_path")
            throw fail(key.source(), "unknown setting '" + std::string(key.str()) +
                                         "'; the ones cvm knows are store_path, trusted_owners, "
                                         "host_compiler and [download]");
        const toml::array* list = node.as_array();
        if (!list)
            throw fail(node.source(),
                       "store_path must be a list of folders, like store_path = [\"/nfs/cvm\"]");
        for (const toml::node& item : *list) {
            const auto* s = item.as_string();
            if (!s || s->get().empty())
                throw fail(item.source(), "store_path must hold folder names in quotes");
            std::string value = s->get();
            fs::path p = value.rfind("~/", 0) == 0
                             ? platform::home_dir() / fs::u8path(value.substr(2))
                             : fs::u8path(value);
            if (!p.is_absolute())
                throw fail(item.source(),
                           "store_path folder '" + value + "' is relative; give the whole path");
            config.store_path.push_back(p.lexically_normal());
        }
    }
    return config;
}

void check_config_file_trusted(const fs::path& file, const platform::FileMeta& meta) {
    const bool machine = is_machine_config_file(file);
    // The machine's file is where the list of trusted owners comes from: only its user's or root's.
    static const std::vector<std::uint32_t> nobody_else;
    check_trusted(machine ? "the machine config file" : "the config file", file, meta,
                  machine ? &nobody_else : nullptr);
    if (machine) check_machine_config_folder(file); // nobody else may put another file there
}

Config read_config_file(const fs::path& file) {
    const bool machine = is_machine_config_file(file);
    auto read = platform::read_whole_file(file.u8string(), 1 << 20);
    if (read.absent()) return Config{};
    if (read.too_large)
        throw ConfigError("the config file " + file.u8string() +
                          " is larger than 1 MiB, not a config file; remove it or write the "
                          "settings into a smaller one");
    if (read.error)
        throw ConfigError("cannot read the config file " + file.u8string() + ": " +
                          platform::error_text(read.error) + "; fix its permissions or remove it");
    if (!read.text)
        throw ConfigError(
            "the config file " + file.u8string() + " is " + platform::file_type_text(file) +
            ", not a regular file; remove it and write the settings into a file of that name");
    check_config_file_trusted(file, read.meta);
    Config config = parse_config(*read.text, file.u8string());
    if (!machine && !config.trusted_owners.empty()) {
        auto where = machine_config_file();
        throw ConfigError(file.u8string() +
                          ": trusted_owners is only read from the machine's config file (" +
                          (where ? where->u8string() : std::string("/etc/cvm/config.toml")) +
                          ", which only root may write); move it there");
    }
    return config;
}

DownloadSettings download_settings() {
    DownloadSettings s = download_variables();
    // The user's file comes first in config_files(), so it fills before the machine's.
    for (const fs::path& file : config_files())
        s.fill_from(read_config_file(file).download);
    return s;
}

} // namespace cvm
