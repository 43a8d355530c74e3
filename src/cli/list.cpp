#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <string_view>

#include "cli/available.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "store/entry_trust.h"
#include "store/resolve.h"
#include "spec/spec_match.h"
#include "text/terminal_text.h"
#include "config/trust.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

constexpr int kKinds = 3; // Kind::Cuda, Kind::Cudnn, Kind::Nccl
using Ids = std::array<std::vector<std::string>, kKinds>;

// What another user could change of a listed entry ("" when nothing). The list index says what
// was found when it was made (when the store's folders last changed): no stat per entry, so
// hundreds of entries still list fast. An entry it doubts is looked at again, so that a fix
// (chown, chmod, trusted_owners) shows at once; the shim and `cvm verify` always look.
std::string untrusted_item(const Store& store, const ListItem& item) {
    if (item.doubt.empty()) return {};
    try {
        auto e = store.find(item.kind, std::string(item.id));
        return e ? entry_doubt_text(*e) : std::string();
    } catch (const TrustError&) { // its entry file: still doubted, as the index says
        return std::string(item.doubt);
    }
}

} // namespace

void register_list(CLI::App& app) {
    auto* cmd = app.add_subcommand("list", "List installed toolkits, cuDNN and NCCL builds (or, "
                                           "with --available, what can be installed)");
    auto json = std::make_shared<bool>(false);
    auto available = std::make_shared<bool>(false);
    auto filter = std::make_shared<ReleaseFilter>();
    add_release_filter(cmd, filter);
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->add_flag("--available", *available, "list known releases from the registry, and how cvm gets each");
    cmd->callback([json, available, filter] {
        if (*available) {
            list_available(*filter, *json);
            return;
        }
        if (release_prefix(*filter, "list"))
            throw UsageError("list: a version PREFIX only applies with --available; run `cvm list --available " +
                                 filter->prefix + "`",
                             "usage");
        Store store = open_store();
        require_store_folder(store);
        std::vector<Kind> kinds;
        for (Kind k : all_kinds())
            if (filter->kind.empty() || filter->kind == kind_dir(k)) kinds.push_back(k);
        // The active combination is marked, as pyenv and rustup do; resolved among the ids
        // listed (only those the spec's versions can match) rather than by listing again.
        auto active_among = [&store](auto matching_ids) -> std::optional<Resolved> {
            try {
                Selection sel = current_selection(store, std::nullopt);
                if (sel.origin == Selection::Origin::None || sel.spec.system) return std::nullopt;
                Ids ids = matching_ids(sel.spec);
                return resolve_among(store, sel.spec, ids[0], ids[1], ids[2]);
            } catch (const std::exception&) {
                return std::nullopt;
            }
        };
        auto is_active = [](const std::optional<Resolved>& active, Kind k, std::string_view id) {
            const Entry* e = active ? active->of(k) : nullptr;
            return e && e->id == id;
        };
        if (*json) {
            std::vector<Entry> listed[kKinds];
            for (Kind k : all_kinds())
                listed[static_cast<int>(k)] = store.list(k);
            auto active = active_among([&](const Spec&) {
                Ids ids;
                for (Kind k : all_kinds())
                    for (const Entry& e : listed[static_cast<int>(k)])
                        ids[static_cast<int>(k)].push_back(e.id);
                return ids;
            });
            nlohmann::json doc = nlohmann::json::object();
            for (Kind k : kinds) {
                nlohmann::json items = nlohmann::json::array();
                for (const Entry& e : listed[static_cast<int>(k)]) {
                    nlohmann::json j = entry_json(store, e);
                    j["active"] = is_active(active, k, e.id);
                    // What the shim would refuse is shown as such (entry_trust.h).
                    std::string doubt = entry_doubt_text(e);
                    j["trusted"] = doubt.empty();
                    if (!doubt.empty()) j["untrusted"] = doubt;
                    // An import's folder may have gone or changed since (`cvm import --detect`).
                    if (e.imported)
                        j["source_state"] =
                            source_state_name(source_state(e.origin.empty() ? e.path : e.origin, e.stamp));
                    items.push_back(std::move(j));
                }
                // Damaged entries are shown, not hidden: their entry file and what is wrong.
                for (const ListItem& e : store.brief(k).items)
                    if (e.damaged)
                        items.push_back({{"kind", kind_dir(k)}, {"id", e.id}, {"damaged", true},
                                         {"entry", e.path}, {"problem", e.stamp}});
                doc[kind_dir(k)] = std::move(items);
            }
            print_json(doc);
            return;
        }
        // Human output from the brief index: with hundreds of entries, parsing each entry (or
        // building JSON) would cost more than everything else `cvm list` does.
        Listing listed[kKinds];
        for (Kind k : all_kinds())
            listed[static_cast<int>(k)] = store.brief(k);
        auto active = active_among([&](const Spec& spec) {
            Ids ids;
            for (Kind k : all_kinds()) {
                const auto& wanted = k == Kind::Cuda    ? std::optional<Version>(spec.cuda)
                                     : k == Kind::Cudnn ? spec.cudnn
                                                        : spec.nccl;
                if (!wanted) continue;
                for (const ListItem& e : listed[static_cast<int>(k)].items) {
                    if (e.damaged) continue;
                    // The toolkit by spec_match.h's rule (a name, or numbers); cuDNN and NCCL by
                    // prefix here, exactly by resolve_among.
                    if (k == Kind::Cuda ? toolkit_matches(spec, e.id, Version{std::vector<unsigned>(
                                                                          e.version, e.version + e.version_parts)})
                                        : e.version_has_prefix(*wanted))
                        ids[static_cast<int>(k)].emplace_back(e.id);
                }
            }
            return ids;
        });
        std::string out;
        for (Kind k : kinds) {
            // NCCL is listed once there is one (or it is asked for): most machines have none.
            if (k == Kind::Nccl && filter->kind.empty() &&
                listed[static_cast<int>(k)].items.empty())
                continue;
            out += kind_dir(k);
            out += "\n";
            const auto& items = listed[static_cast<int>(k)].items;
            if (items.empty()) out += "  (none; run `cvm install` or `cvm import DIR`)\n";
            for (const ListItem& e : items) {
                if (e.damaged) {
                    out += "  " + std::string(e.id) + "  (damaged: " + std::string(e.stamp) + ")\n";
                    continue;
                }
                out += is_active(active, k, e.id) ? "* " : "  ";
                out += e.id;
                if (e.id.size() < 22) out.append(22 - e.id.size(), ' ');
                out += " ";
                out += e.path;
                out += "  (";
                out += e.imported ? "imported" : "installed";
                if (k == Kind::Cuda && !parse_toolkit_id(e.id)) { // a name (import --as): its release
                    out += ", CUDA ";
                    for (unsigned i = 0; i < e.version_parts; ++i)
                        out += (i ? "." : "") + std::to_string(e.version[i]);
                }
                if (e.imported) {
                    SourceState st = source_state(fs::u8path(e.path), e.stamp);
                    if (st == SourceState::Gone) out += ", source gone";
                    if (st == SourceState::Changed) out += ", changed: run cvm import --detect";
                }
                if (e.layer != 0) out += ", read-only store " + store.layers()[e.layer].u8string();
                if (std::string doubt = untrusted_item(store, e); !doubt.empty())
                    out += ", UNTRUSTED, cvm will not run it: " + doubt;
                out += ")\n";
            }
        }
        out = escape_controls(out, true); // folder names with terminal escapes
        std::fwrite(out.data(), 1, out.size(), stdout);
    });
}

} // namespace cvm::cli
