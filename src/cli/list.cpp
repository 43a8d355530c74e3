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
        // The active combination is marked, as pyenv and rustup do.
        std::optional<Resolved> active;
        try {
            Selection sel = current_selection(store, std::nullopt);
            if (sel.origin != Selection::Origin::None && !sel.spec.system) active = resolve(store, sel.spec);
        } catch (const std::exception&) {
        }
        nlohmann::json doc = nlohmann::json::object();
        for (Kind k : {Kind::Cuda, Kind::Cudnn}) {
            if (!kind->empty() && *kind != kind_dir(k)) continue;
            nlohmann::json items = nlohmann::json::array();
            for (const Entry& e : store.list(k)) {
                nlohmann::json j = entry_json(store, e);
                bool is_active = active && (k == Kind::Cuda ? active->toolkit.id == e.id
                                                            : active->cudnn && active->cudnn->id == e.id);
                j["active"] = is_active;
                items.push_back(j);
            }
            doc[k == Kind::Cuda ? "cuda" : "cudnn"] = items;
        }
        if (*json) {
            print_json(doc);
            return;
        }
        for (const char* k : {"cuda", "cudnn"}) {
            if (!doc.contains(k)) continue;
            std::printf("%s\n", k);
            if (doc[k].empty()) std::printf("  (none; run `cvm install` or `cvm import DIR`)\n");
            for (const auto& j : doc[k]) {
                std::string tag = j["source"].get<std::string>();
                if (j["read_only"].get<bool>()) tag += ", read-only store " + j["layer"].get<std::string>();
                std::printf("%s %-22s %s  (%s)\n", j["active"].get<bool>() ? "*" : " ",
                            j["id"].get<std::string>().c_str(), j["path"].get<std::string>().c_str(),
                            tag.c_str());
            }
        }
    });
}

} // namespace cvm::cli
