// `cvm verify [ID] [--json]`: are the store's files still what was installed? Thin: the checks
// are cvm::install::verify_entry / verify_views (src/install/verify.h). Exit 0 intact, 1 damaged (or, for an
// import, open to another user's changes).
//
// Test hook: CVM_DPKG_INFO (folder read instead of /var/lib/dpkg/info; empty: none).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "cli/context.h"
#include "store/resolve.h"
#include "text/terminal_text.h"
#include "install/progress.h"
#include "install/verify.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

using install::EntryCheck;

constexpr std::size_t kShown = 10; // problems printed per entry

std::string entry_line(const EntryCheck& c, const Entry& e) {
    std::string name = std::string(kind_dir(c.kind)) + " " + c.id + ": ";
    std::string count = std::to_string(c.checked) + " file" + (c.checked == 1 ? "" : "s");
    if (c.imported) {
        name += "imported from " + (e.origin.empty() ? e.path : e.origin).u8string() +
                "; cvm did not write these files and can only compare them with their owner's "
                "record: ";
        switch (c.state) {
        case EntryCheck::State::NoRecord:
            return name + "none lists them (no wheel RECORD, no dpkg md5sums), nothing compared";
        case EntryCheck::State::Intact:
            return name + count + " match " + c.record +
                   (c.uncovered ? " (" + std::to_string(c.uncovered) + " not listed there)" : "");
        case EntryCheck::State::Untrusted:
            return name +
                   (c.checked ? count + " match " + c.record
                              : std::string("none lists them, nothing compared")) +
                   "; but ANOTHER USER COULD CHANGE " + std::to_string(c.untrusted.size()) +
                   " of its folders and files";
        default:
            return name + "DAMAGED, " + std::to_string(c.problems.size()) + " of " + count +
                   " differ from " + (c.record.empty() ? "the import" : c.record);
        }
    }
    switch (c.state) {
    case EntryCheck::State::Intact:
        return name + "intact, " + count + " match what was installed";
    case EntryCheck::State::Unrecorded:
        return name + "installed by an older cvm that kept no record of its files; run `" +
               "cvm install --reinstall " + c.id + "` to record them";
    default:
        return name + "DAMAGED, " + std::to_string(c.problems.size()) + " of " + count +
               " differ from what was installed";
    }
}

void print_problems(const std::vector<install::VerifyProblem>& problems) {
    for (std::size_t i = 0; i < problems.size() && i < kShown; ++i)
        std::printf("  %s: %s\n", escape_controls(problems[i].path).c_str(),
                    escape_controls(problems[i].what).c_str());
    if (problems.size() > kShown)
        std::printf("  ... and %s more\n", std::to_string(problems.size() - kShown).c_str());
}

nlohmann::json problems_json(const std::vector<install::VerifyProblem>& problems) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : problems)
        list.push_back({{"path", p.path}, {"problem", p.what}});
    return list;
}

// An entry folder whose entry file is missing, unreadable, not a regular file (a FIFO) or
// malformed: damaged, never taken for "nothing is installed".
struct DamagedEntry {
    Kind kind;
    std::string id;
    fs::path dir;
    std::string problem;
};

// The entry `id` of `kind`, or (pushed onto `damaged`) why it cannot be read; nullopt for both
// when no layer has such an entry folder.
std::optional<Entry> entry_or_damage(const Store& store, Kind kind, const std::string& id,
                                     std::vector<DamagedEntry>& damaged) {
    fs::path dir;
    for (const auto& layer : store.layers()) {
        std::error_code ec;
        auto st = fs::symlink_status(layer / kind_dir(kind) / fs::u8path(id), ec);
        if (fs::is_directory(st) || fs::is_symlink(st)) {
            dir = layer / kind_dir(kind) / fs::u8path(id);
            break;
        }
    }
    try {
        if (auto e = store.find(kind, id)) return e;
    } catch (const std::exception& ex) {
        damaged.push_back({kind, id, dir, ex.what()});
        return std::nullopt;
    }
    if (!dir.empty())
        damaged.push_back({kind, id, dir,
                           "its entry file " + (dir / "entry").u8string() +
                               " is missing; remove the folder " + dir.u8string() +
                               " and import or install it again"});
    return std::nullopt;
}

} // namespace

void register_verify(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "verify", "Check that installed files are still what was installed (sizes, SHA-256, "
                  "links of the merged views); exit 1 when something is damaged");
    auto id = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("id", *id,
                    "a toolkit id (12.4.1), cuDNN id (9.1.0.70-cuda12) or NCCL id "
                    "(2.21.5-cuda12.4); default: all");
    cmd->add_flag("--json", *json, "print one JSON document on stdout");
    cmd->callback([id, json] {
        Store store = open_store();
        std::vector<Entry> entries;
        std::vector<DamagedEntry> damaged_entries;
        if (!id->empty()) {
            auto found = kind_of_id(store, *id);
            if (!found)
                throw UsageError("verify: '" + printable(*id) + "' is not " + kEntryIdForms +
                                 "; see `cvm list`");
            Kind kind = *found;
            auto e = entry_or_damage(store, kind, *id, damaged_entries);
            if (!e && damaged_entries.empty())
                throw Failure(std::string(kind_dir(kind)) + " " + *id +
                              " is not installed; see `cvm list`");
            if (e) entries.push_back(std::move(*e));
        } else {
            for (Kind k : all_kinds()) {
                std::set<std::string> listed;
                for (auto& e : store.list(k)) {
                    listed.insert(e.id);
                    entries.push_back(std::move(e));
                }
                for (const auto& [other, layer] : store.ids(k))
                    if (!listed.count(other)) entry_or_damage(store, k, other, damaged_entries);
            }
        }
        fs::path dpkg = fs::u8path(platform::get_env("CVM_DPKG_INFO").value_or("/var/lib/dpkg/info"));
        bool damaged = false;
        nlohmann::json entries_json = nlohmann::json::array();
        // Hashing gigabytes takes seconds: a bar per entry on a terminal, a line before and after
        // it otherwise (on stderr), as installs show theirs.
        auto progress = quiet_flag() ? std::make_unique<install::Progress>(false, true) : install::Progress::for_stderr();
        for (const auto& e : entries) {
            int bar = -1;
            const std::string label = std::string(kind_dir(e.kind)) + " " + e.id;
            EntryCheck c = install::verify_entry(e, dpkg, [&](std::uint64_t done, std::uint64_t total) {
                if (bar < 0) bar = progress->start("verifying", label, total);
                progress->update(bar, done, total);
            });
            if (bar >= 0) progress->finish(bar, true);
            damaged |= c.state == EntryCheck::State::Damaged ||
                        c.state == EntryCheck::State::Untrusted;
            if (*json) {
                nlohmann::json j = {{"kind", kind_dir(c.kind)},
                                    {"id", c.id},
                                    {"source", c.imported ? "imported" : "installed"},
                                    {"state", install::state_name(c.state)},
                                    {"record", c.record},
                                    {"checked", c.checked},
                                    {"problems", problems_json(c.problems)}};
                if (c.imported) {
                    j["not_listed"] = c.uncovered;
                    j["untrusted"] = problems_json(c.untrusted);
                }
                if (!c.repair.empty()) j["repair"] = c.repair;
                entries_json.push_back(j);
                continue;
            }
            std::printf("%s\n", escape_controls(entry_line(c, e)).c_str());
            print_problems(c.problems);
            print_problems(c.untrusted);
            if (c.state == EntryCheck::State::Damaged || c.state == EntryCheck::State::Untrusted)
                std::printf("  repair: %s\n", escape_controls(c.repair).c_str());
        }
        for (const auto& d : damaged_entries) {
            damaged = true;
            const std::string repair =
                "remove the folder " + d.dir.u8string() + " and import or install it again";
            if (*json) {
                entries_json.push_back(
                    {{"kind", kind_dir(d.kind)},
                     {"id", d.id},
                     {"source", "unknown"},
                     {"state", "damaged"},
                     {"record", (d.dir / "entry").u8string()},
                     {"checked", 0},
                     {"problems", nlohmann::json::array({{{"path", (d.dir / "entry").u8string()},
                                                          {"problem", d.problem}}})},
                     {"repair", repair}});
                continue;
            }
            std::printf("%s %s: DAMAGED, its entry cannot be read\n  %s\n  repair: %s\n",
                        kind_dir(d.kind), escape_controls(d.id).c_str(),
                        escape_controls(d.problem).c_str(), escape_controls(repair).c_str());
        }
        nlohmann::json views_json = nlohmann::json::array();
        for (const auto& v : install::verify_views(store, *id)) {
            damaged |= !v.problems.empty();
            std::string repair = "remove " + v.path.u8string() + " (cvm makes it again when needed)";
            if (*json) {
                nlohmann::json j = {{"name", v.name},
                                    {"path", v.path.u8string()},
                                    {"state", v.problems.empty() ? "intact" : "damaged"},
                                    {"problems", problems_json(v.problems)}};
                if (!v.problems.empty()) j["repair"] = repair;
                views_json.push_back(j);
                continue;
            }
            if (v.problems.empty()) {
                std::printf("view %s: intact\n", v.name.c_str());
                continue;
            }
            std::printf("view %s: DAMAGED, %s problem(s)\n", v.name.c_str(),
                        std::to_string(v.problems.size()).c_str());
            print_problems(v.problems);
            std::printf("  repair: %s\n", escape_controls(repair).c_str());
        }
        if (*json) print_json({{"intact", !damaged}, {"entries", entries_json}, {"views", views_json}});
        else if (entries.empty() && damaged_entries.empty())
            note("nothing is installed; nothing to verify");
        if (damaged) throw ExitCode{1};
    });
}

} // namespace cvm::cli
