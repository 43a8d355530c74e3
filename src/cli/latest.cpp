// `cvm latest [cuda|cudnn] [PREFIX] [--installed] [--json]`: the newest release `cvm install`
// can fetch (from the registry, offline), or with --installed the newest one installed.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/available.h"
#include "cli/commands.h"
#include "cli/context.h"

namespace cvm::cli {

namespace {

struct LatestArgs {
    std::shared_ptr<ReleaseFilter> filter = std::make_shared<ReleaseFilter>();
    bool installed = false;
    bool json = false;
};

// The newest installed entry of `kind` whose version starts with `prefix`: its id and version.
std::optional<std::pair<std::string, Version>> newest_installed(const Store& store, Kind kind,
                                                                const std::optional<Version>& prefix) {
    std::optional<std::pair<std::string, Version>> best;
    std::optional<EntryIdParts> best_parts;
    for (const auto& [id, layer] : store.ids(kind)) {
        (void)layer;
        auto p = parse_entry_id(kind, id);
        if (!p || (prefix && !p->version.has_prefix(*prefix))) continue;
        // Builds of one release: the one for the newest CUDA.
        if (!best_parts || best_parts->version < p->version ||
            (best_parts->version == p->version && best_parts->cuda < p->cuda)) {
            best_parts = p;
            best = std::pair{id, p->version};
        }
    }
    return best;
}

void run_latest(LatestArgs& a) {
    auto prefix = release_prefix(*a.filter, "latest");
    Kind kind = kind_of_dir(a.filter->kind).value_or(Kind::Cuda);
    std::string what = kind_label(kind);
    std::string starting = prefix ? " starts with " + prefix->str() : " is known";
    Store store = open_store();
    nlohmann::json doc;
    doc["kind"] = kind_dir(kind);
    if (a.installed) {
        auto best = newest_installed(store, kind, prefix);
        if (!best)
            throw Failure(
                std::string("no installed ") + what + (kind == Kind::Cuda ? " toolkit" : " build") +
                    (prefix ? " starts with " + prefix->str() : std::string()) +
                    "; run `cvm install " +
                    (kind == Kind::Cuda ? std::string() : std::string(kind_dir(kind)) + " ") +
                    (prefix ? prefix->str() : std::string("SPEC")) + "` (see `cvm list`)",
                "not_installed");
        doc["id"] = best->first;
        doc["version"] = best->second.str();
        doc["installed"] = true;
        if (a.json) print_json(doc);
        else std::printf("%s\n", best->first.c_str());
        return;
    }
    registry::Registry reg = load_registry_or_fail();
    for (const KnownRelease& r : known_releases(reg, store, kind, prefix)) {
        if (!r.installable) continue; // not fetched by `cvm install`
        // cuDNN builds of one release are listed together: a release is installed when any is.
        bool installed = r.installed;
        if (kind != Kind::Cuda)
            for (const KnownRelease& other : known_releases(reg, store, kind, r.version))
                installed |= other.installed;
        doc["version"] = r.version.str();
        doc["released"] = released_json(r.date);
        doc["installed"] = installed;
        doc["how"] = registry::fetch_name(r.how);
        if (a.json) print_json(doc);
        else std::printf("%s\n", r.version.str().c_str());
        return;
    }
    throw Failure("no " + what + " release that cvm can install" + starting + " (see `cvm list --available " +
                      kind_dir(kind) + (prefix ? " " + prefix->str() : std::string()) + "`)",
                  "not_found");
}

} // namespace

void register_latest(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "latest", "Print the newest CUDA (or cuDNN, NCCL) release cvm can install, or with "
                  "--installed the newest installed one");
    auto a = std::make_shared<LatestArgs>();
    add_release_filter(cmd, a->filter);
    cmd->add_flag("--installed", a->installed, "the newest installed one instead");
    cmd->add_flag("--json", a->json, "print one JSON document");
    cmd->callback([a] { run_latest(*a); });
}

} // namespace cvm::cli
