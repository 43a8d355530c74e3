#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"

namespace cvm::cli {

void register_list(CLI::App& app) {
    auto* cmd = app.add_subcommand("list", "List installed toolkits and cuDNN builds (or, with --available, what can be installed)");
    auto json = std::make_shared<bool>(false);
    auto available = std::make_shared<bool>(false);
    auto kind = std::make_shared<std::string>();
    cmd->add_option("kind", *kind, "cuda or cudnn")->check(CLI::IsMember({"cuda", "cudnn"}));
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->add_flag("--available", *available, "list known releases from the registry");
    cmd->callback([json, available, kind] {
        if (*available) {
            list_available(*kind, *json);
            return;
        }
        Store store = open_store();
        std::vector<Kind> kinds;
        for (Kind k : {Kind::Cuda, Kind::Cudnn})
            if (kind->empty() || *kind == kind_dir(k)) kinds.push_back(k);
        std::vector<Entry> listed[2];
        for (Kind k : {Kind::Cuda, Kind::Cudnn}) listed[static_cast<int>(k)] = store.list(k);
        // The active combination is marked, as pyenv and rustup do; resolved among the entries
        // just listed rather than by listing the store again.
        std::optional<Resolved> active;
        try {
            Selection sel = current_selection(store, std::nullopt);
            if (sel.origin != Selection::Origin::None && !sel.spec.system) {
                std::vector<std::string> ids[2];
                for (int k = 0; k < 2; ++k)
                    for (const Entry& e : listed[k]) ids[k].push_back(e.id);
                active = resolve_among(store, sel.spec, ids[0], ids[1]);
            }
        } catch (const std::exception&) {
        }
        auto is_active = [&](const Entry& e) {
            return active && (e.kind == Kind::Cuda ? active->toolkit.id == e.id
                                                   : active->cudnn && active->cudnn->id == e.id);
        };
        if (*json) {
            nlohmann::json doc = nlohmann::json::object();
            for (Kind k : kinds) {
                nlohmann::json items = nlohmann::json::array();
                for (const Entry& e : listed[static_cast<int>(k)]) {
                    nlohmann::json j = entry_json(store, e);
                    j["active"] = is_active(e);
                    items.push_back(std::move(j));
                }
                doc[kind_dir(k)] = std::move(items);
            }
            print_json(doc);
            return;
        }
        // Human output straight from the entries: with hundreds of them, building JSON first
        // would cost more than reading them.
        std::string out;
        for (Kind k : kinds) {
            out += kind_dir(k);
            out += "\n";
            const auto& entries = listed[static_cast<int>(k)];
            if (entries.empty()) out += "  (none; run `cvm install` or `cvm import DIR`)\n";
            for (const Entry& e : entries) {
                out += is_active(e) ? "* " : "  ";
                out += e.id;
                if (e.id.size() < 22) out.append(22 - e.id.size(), ' ');
                out += " ";
                out += e.path.u8string();
                out += "  (";
                out += e.imported ? "imported" : "installed";
                if (e.layer != 0) out += ", read-only store " + store.layers()[e.layer].u8string();
                out += ")\n";
            }
        }
        std::fwrite(out.data(), 1, out.size(), stdout);
    });
}

} // namespace cvm::cli
