#include "store/store.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/config_cache.h"
#include "store/entry_format.h"
#include "config/folder_chain.h"
#include "config/trust.h"
#include "platform/platform.h"

namespace cvm {

std::string source_stamp(const fs::path& file) {
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    if (ec) return {};
    auto time = fs::last_write_time(file, ec);
    if (ec) return {};
    return std::to_string(size) + " " + std::to_string(time.time_since_epoch().count()) + " " +
           file.u8string();
}

SourceState source_state(const fs::path& source, std::string_view stamp) {
    std::error_code ec;
    if (!fs::is_directory(source, ec)) return SourceState::Gone;
    if (stamp.empty()) return SourceState::Ok;
    size_t s1 = stamp.find(' ');
    size_t s2 = s1 == std::string_view::npos ? s1 : stamp.find(' ', s1 + 1);
    if (s2 == std::string_view::npos) return SourceState::Ok; // not ours to judge
    fs::path file = fs::u8path(stamp.substr(s2 + 1));
    return source_stamp(file) == stamp ? SourceState::Ok : SourceState::Changed;
}

const char* source_state_name(SourceState s) {
    return s == SourceState::Ok ? "ok" : s == SourceState::Gone ? "gone" : "changed";
}

Store::Store(std::vector<fs::path> layers) : layers_(std::move(layers)) {
    if (layers_.empty()) layers_.push_back(default_root());
}

fs::path Store::default_root() {
    if (auto r = platform::get_env("CVM_ROOT"); r && !r->empty()) {
        fs::path root = fs::u8path(*r);
        // A relative store would be a folder of wherever cvm runs: any project holding one would
        // decide which nvcc runs there.
        if (root.is_relative())
            throw ConfigError("CVM_ROOT is the relative path '" + printable(*r) +
                              "'; set it to a whole path (e.g. CVM_ROOT=$PWD/" + printable(*r) +
                              ") or unset it");
        refuse_list_separator("CVM_ROOT", root);
        return root;
    }
    fs::path root = platform::user_data_dir() / "cvm";
    refuse_list_separator("the store folder", root);
    return root;
}

void refuse_list_separator(const std::string& what, const fs::path& folder) {
    // Its bin folders go on PATH, whose entries this character separates.
    const char sep = platform::path_list_separator();
    if (folder.u8string().find(sep) != std::string::npos)
        throw ConfigError(what + " " + printable(folder.u8string()) + " holds '" +
                          std::string(1, sep) +
                          "', which separates PATH's folders; move it to a folder without one");
}

Store Store::from_environment() {
    std::vector<fs::path> layers{default_root()};
    auto add_list = [&](const std::string& list, char sep, const std::string& from) {
        for (const auto& item : split_list(list, sep)) {
            if (item.empty()) continue;
            fs::path p = fs::u8path(item);
            if (p.is_relative())
                throw ConfigError(from + ": the store folder '" + printable(item) +
                                  "' is relative; give its whole path");
            refuse_list_separator(from + ": the store folder", p);
            if (std::find(layers.begin(), layers.end(), p) == layers.end()) layers.push_back(p);
        }
    };
    if (auto sp = platform::get_env("CVM_STORE_PATH"))
        add_list(*sp, platform::path_list_separator(), "CVM_STORE_PATH");
    // <root>/store-path: one read-only store per line. Read without iostreams: the shim runs
    // this, and an ifstream costs it the C++ locale's start-up.
    if (auto text = platform::read_file(layers.front() / "store-path")) {
        for (const auto& raw : split_list(*text, '\n')) {
            std::string line = raw;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.empty() || line[0] == '#') continue;
            add_list(line, '\n', (layers.front() / "store-path").u8string());
        }
    }
    // The user's config.toml, then the machine's (see config.h), through their precompiled
    // answer when the files have not changed (config_cache.h): no TOML on the shim's path.
    ConfigAnswer config = config_store_paths(layers.front());
    use_trusted_owners(config.trusted_owners);
    for (const ConfigStores& from : config.stores)
        for (const fs::path& p : from.store_path) {
            refuse_list_separator(from.file.u8string() + ": the store folder", p);
            if (std::find(layers.begin(), layers.end(), p) == layers.end()) layers.push_back(p);
        }
    // Nobody else may swap a layer for their own (folder_chain.h): once per command or shim run.
    for (const fs::path& layer : layers) check_folder_chain("the store folder", layer);
    return Store(std::move(layers));
}

std::vector<std::pair<std::string, size_t>> Store::ids(Kind kind) const {
    std::vector<std::pair<std::string, size_t>> out;
    std::unordered_set<std::string> seen;
    const char sep = platform::host_os() == platform::Os::Windows ? '\\' : '/';
    for (size_t i = 0; i < layers_.size(); ++i) {
        std::string dir = layers_[i].u8string();
        if (dir.empty() || dir.back() != sep) dir += sep;
        // Names only, no fs::path per entry: the shim resolves through this before every tool.
        dir += kind_dir(kind);
        platform::FileMeta meta;
        std::vector<std::string> names = platform::folder_names(dir, &meta);
        if (meta.type == platform::FileMeta::Type::Directory) check_trusted_at("the store folder", dir, meta);
        for (std::string& name : names) {
            if (name.empty() || name[0] == '.') continue;
            // An id in an earlier layer hides the same id later; with one layer there is nothing to hide.
            if (layers_.size() == 1 || seen.insert(name).second) out.emplace_back(std::move(name), i);
        }
    }
    return out;
}

std::optional<Entry> Store::find(Kind kind, const std::string& id) const {
    // Paths as strings until an entry is found: the shim calls this before every tool.
    const char sep = platform::host_os() == platform::Os::Windows ? '\\' : '/';
    for (size_t i = 0; i < layers_.size(); ++i) {
        std::string dir = layers_[i].u8string();
        if (dir.empty() || dir.back() != sep) dir += sep;
        dir += kind_dir(kind);
        dir += sep;
        dir += id;
        std::string file = dir + sep + "entry";
        auto read = platform::read_file_checked(file);
        if (read.absent()) continue;
        if (!read.text)
            throw std::runtime_error(file + (read.error ? ": " + platform::error_text(read.error)
                                                        : " is " + platform::file_type_text(fs::u8path(file))) +
                                     "; remove the folder " + dir + " and import or install again");
        check_trusted_at("the store entry", file, read.meta);
        Entry e = parse_entry(*read.text, fs::u8path(dir), file);
        e.layer = i;
        return e;
    }
    return std::nullopt;
}

} // namespace cvm
