// `cvm cache clean [--all] [--json]`: frees what $CVM_ROOT/cache holds. Nothing there is needed:
// downloads are fetched again (and checked against their manifest sums) when an install wants
// them, the listing index is rebuilt by the next `cvm list`, and the registry overlay by the next
// `cvm update` (without it the registry shipped with cvm answers).
#include <cstdint>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"

namespace cvm::cli {

namespace {

// Bytes of the regular files under `p` (links are not followed: they are removed, not their
// targets, and count nothing).
std::uintmax_t bytes_under(const fs::path& p) {
    std::error_code ec;
    auto st = fs::symlink_status(p, ec);
    if (fs::is_regular_file(st)) {
        auto size = fs::file_size(p, ec);
        return ec ? 0 : size;
    }
    if (!fs::is_directory(st)) return 0;
    std::uintmax_t total = 0;
    for (fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && !it->is_symlink(ec)) {
            auto size = it->file_size(ec);
            if (!ec) total += size;
            ec.clear();
        }
    }
    return total;
}

std::string size_text(std::uintmax_t bytes) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1000 && unit < 4) {
        value /= 1000;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    return buf;
}

void clean(bool all, bool json) {
    Store store = open_store();
    fs::path cache = store.cache_dir();
    std::error_code ec;
    auto st = fs::symlink_status(cache, ec);
    if (fs::is_symlink(st))
        throw Failure("cache clean: " + cache.u8string() +
                      " is a link, so cvm leaves it and what it points to alone; remove it yourself");
    std::vector<fs::path> items; // what goes: each one whole
    if (fs::is_directory(st)) {
        if (all) {
            for (const auto& entry : fs::directory_iterator(cache, ec)) items.push_back(entry.path());
        } else if (fs::exists(fs::symlink_status(cache / "downloads", ec))) {
            items.push_back(cache / "downloads");
        }
    }
    std::uintmax_t freed = 0;
    nlohmann::json removed = nlohmann::json::array();
    for (const auto& item : items) {
        std::uintmax_t bytes = bytes_under(item);
        fs::remove_all(item); // a failure names the item (mapped to one line by main)
        freed += bytes;
        removed.push_back({{"path", item.u8string()}, {"bytes", bytes}});
    }
    if (json) {
        print_json({{"cache", cache.u8string()}, {"all", all}, {"removed", removed}, {"bytes_freed", freed}});
        return;
    }
    std::string what = all ? "the cache" : "downloaded archives";
    if (items.empty())
        note("nothing to clean in " + cache.u8string() + (all ? "" : " (no downloaded archives)"));
    else
        note("removed " + what + " in " + cache.u8string() + ": " + size_text(freed) + " freed");
}

} // namespace

void register_cache(CLI::App& app) {
    auto* cmd = app.add_subcommand("cache", "Manage cvm's cache of downloads: cvm cache clean [--all]");
    auto* clean_cmd = cmd->add_subcommand(
        "clean", "Remove downloaded archives ($CVM_ROOT/cache/downloads); with --all, everything cached "
                 "(the listing index and any cached registry data too)");
    auto all = std::make_shared<bool>(false);
    auto json = std::make_shared<bool>(false);
    clean_cmd->add_flag("--all", *all, "empty the whole cache folder, not only the downloads");
    clean_cmd->add_flag("--json", *json, "print what was removed and the bytes freed as JSON");
    clean_cmd->callback([all, json] { clean(*all, *json); });
    cmd->callback([cmd] {
        if (cmd->get_subcommands().empty())
            throw UsageError("cache: say what to do; e.g. cvm cache clean (downloads) or cvm cache clean --all");
    });
}

} // namespace cvm::cli
