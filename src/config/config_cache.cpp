#include "config/config_cache.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "config/config.h"
#include "config/trust.h"
#include "platform/platform.h"
#include "text/affixes.h"

namespace cvm {

namespace {

// The cache file: this first line, a line with the body's size and FNV-1a hash, then the body:
//   reader <euid> <SUDO_UID or -> <HOME or ->       what else the answer depends on
//   file <1 for the machine's, else 0> <stamp>\t<path>  one per config file, in order
//   end
//   layer <index of the file> <folder>              its store_path, in order
//   owner <name>                                    the machine file's trusted_owners, in order
constexpr std::string_view kConfigCacheHead = "cvm-config-cache 1\n";

std::string config_cache_sum(std::string_view body) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : body) h = (h ^ c) * 1099511628211ull;
    char line[64];
    std::snprintf(line, sizeof line, "sum %zu %016llx\n", body.size(),
                  static_cast<unsigned long long>(h));
    return line;
}

bool holds_line_break(std::string_view s) { return s.find_first_of("\n\r\t") != std::string_view::npos; }

struct KeptConfig {
    std::vector<ConfigStores> stores;
    std::vector<std::string> owners;
};

// The kept answer when the cache is whole, the user's own and made from files of `head`.
std::optional<KeptConfig> read_kept_config(const fs::path& cache, const std::string& head,
                                           const std::vector<fs::path>& files) {
    auto read = platform::read_file_checked(cache.u8string(), std::size_t(1) << 20);
    if (!read.text) return std::nullopt;
    // Another user could have written any list of stores into it.
    static const std::vector<std::uint32_t> nobody_else;
    if (doubt_of(read.meta, &nobody_else) != Doubt::None) return std::nullopt;
    std::string_view rest(*read.text);
    if (!starts_with(rest, kConfigCacheHead)) return std::nullopt;
    rest.remove_prefix(kConfigCacheHead.size());
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    std::string_view sum = rest.substr(0, nl + 1);
    rest.remove_prefix(nl + 1);
    if (sum != config_cache_sum(rest) || !starts_with(rest, head)) return std::nullopt;
    rest.remove_prefix(head.size());
    KeptConfig kept;
    for (const fs::path& f : files)
        kept.stores.push_back({f, {}});
    while (!rest.empty()) {
        nl = rest.find('\n');
        if (nl == std::string_view::npos) return std::nullopt;
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl + 1);
        if (starts_with(line, "owner ")) {
            kept.owners.emplace_back(line.substr(6));
            continue;
        }
        if (!starts_with(line, "layer ")) return std::nullopt;
        line.remove_prefix(6);
        size_t index = 0, digits = 0;
        while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9' && digits < 4)
            index = index * 10 + static_cast<size_t>(line[digits++] - '0');
        if (digits == 0 || digits >= line.size() || line[digits] != ' ' || index >= files.size())
            return std::nullopt;
        fs::path folder = fs::u8path(line.substr(digits + 1));
        if (!folder.is_absolute()) return std::nullopt;
        kept.stores[index].store_path.push_back(std::move(folder));
    }
    return kept;
}

// Writes the cache; best effort (a store that cannot be written reads the files each time).
void write_kept_config(const fs::path& root, const fs::path& cache, std::string body,
                       const std::vector<ConfigStores>& stores,
                       const std::vector<std::string>& owners) {
    for (size_t i = 0; i < stores.size(); ++i)
        for (const fs::path& p : stores[i].store_path) {
            std::string s = p.u8string();
            if (holds_line_break(s)) return;
            body += "layer " + std::to_string(i) + " " + s + "\n";
        }
    for (const std::string& o : owners) {
        if (holds_line_break(o)) return;
        body += "owner " + o + "\n";
    }
    std::error_code ec;
    // Only in a store that is there: reading settings makes no store.
    if (!fs::is_directory(root, ec)) return;
    fs::create_directories(cache.parent_path(), ec);
    std::string text(kConfigCacheHead);
    text += config_cache_sum(body);
    text += body;
    try {
        platform::write_file_atomically(cache, text);
    } catch (const std::exception&) {
    }
}

} // namespace

fs::path config_cache_file(const fs::path& root) { return root / "cache" / "config"; }

ConfigAnswer config_store_paths(const fs::path& root) {
    const std::vector<fs::path> files = config_files();

    // What the answer depends on besides the files' contents: who reads (the trust rules),
    // and HOME (a store_path of "~/...").
    auto sudo = platform::sudo_uid();
    auto home = platform::get_env("HOME");
    std::string head = "reader " + std::to_string(platform::effective_uid()) + " " +
                       (sudo ? std::to_string(*sudo) : std::string("-")) + " " +
                       (home ? *home : std::string("-")) + "\n";
    bool cacheable = !home || !holds_line_break(*home);
    bool settled = true;
    // Stamped before reading: a change while reading leaves a stamp that no longer matches.
    std::vector<platform::ChangeStamp> stamps;
    for (const fs::path& f : files) {
        stamps.push_back(platform::change_stamp(f));
        const platform::ChangeStamp& s = stamps.back();
        std::string p = f.u8string();
        if (s.text.empty() || holds_line_break(p)) cacheable = false;
        settled = settled && s.settled;
        head += std::string("file ") + (is_machine_config_file(f) ? "1 " : "0 ") + s.text + "\t" + p +
                "\n";
    }
    head += "end\n";
    // No file at all (the common case): nothing to read, nothing to keep.
    bool none = true;
    for (const platform::ChangeStamp& s : stamps)
        none = none && s.text == "absent";
    if (none) {
        ConfigAnswer out;
        for (const fs::path& f : files)
            out.stores.push_back({f, {}});
        return out;
    }

    const fs::path cache = config_cache_file(root);
    if (cacheable) {
        if (auto kept = read_kept_config(cache, head, files)) {
            // The trust checks read_config_file makes, on the stats just made.
            for (size_t i = 0; i < files.size(); ++i)
                if (stamps[i].meta) check_config_file_trusted(files[i], *stamps[i].meta);
            return {std::move(kept->stores), std::move(kept->owners)};
        }
    }

    ConfigAnswer out;
    for (const fs::path& f : files) {
        Config c = read_config_file(f);
        if (is_machine_config_file(f)) out.trusted_owners = c.trusted_owners;
        out.stores.push_back({f, std::move(c.store_path)});
    }
    if (cacheable && settled) write_kept_config(root, cache, head, out.stores, out.trusted_owners);
    return out;
}

} // namespace cvm
