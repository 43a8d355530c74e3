// `cvm update [--max N] [--json]`: looks on the mirror for releases newer than cvm's registry and
// keeps them in the registry overlay (src/install/registry_update.h).
#include <algorithm>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/errors.h"
#include "cli/release_registry.h"
#include "install/error.h"
#include "install/registry_update.h"
#include "install/store_install.h"
#include "registry/registry.h"

namespace cvm::cli {

namespace {

void run_update(unsigned max_fetches, bool json) {
    Store store = open_store();
    registry::Registry shipped;
    try {
        shipped = registry::load_default_registry();
    } catch (const registry::RegistryError& e) {
        throw Failure(std::string("update: cannot read cvm's own release registry: ") + e.what());
    }
    install::UpdateOptions options;
    options.mirror = install::default_mirror();
    options.cache_dir = store.cache_dir();
    options.max_fetches = max_fetches;
    // A listing or manifest is small: a few quick tries, not an installer's patience.
    options.download.retries = std::min(options.download.retries, 1u);
    install::UpdateReport rep;
    try {
        rep = install::update_registry(shipped, options);
    } catch (const install::InstallError& e) {
        throw Failure("update: " + std::string(e.what()) +
                          "; nothing was changed, and cvm's own registry still works offline",
                      e.code().empty() ? "network" : e.code());
    } catch (const std::filesystem::filesystem_error& e) {
        throw Failure("update: " + system_error_line(e), error_code_of(e.code()));
    }
    if (json) {
        print_json({{"mirror", options.mirror},
                    {"overlay", rep.file.u8string()},
                    {"added", rep.added},
                    {"releases", rep.releases},
                    {"left", rep.left},
                    {"problems", rep.problems}});
    } else {
        for (const auto& a : rep.added) note("added " + a);
        if (rep.added.empty()) note("no release newer than cvm's registry on " + options.mirror);
        note("the registry overlay " + rep.file.u8string() + " holds " + std::to_string(rep.releases) +
             " release" + (rep.releases == 1 ? "" : "s") + " cvm's own list lacks");
        for (const auto& p : rep.problems) note(p + " (skipped)");
    }
    if (rep.left > 0)
        hint("cvm update", std::to_string(rep.left) + " more new release" + (rep.left == 1 ? "" : "s") +
                               " left for the next run; --max " + std::to_string(max_fetches) + " per run");
    else if (!rep.added.empty())
        hint("cvm list --available", "shows them");
    if (!rep.problems.empty()) throw ExitCode{1};
}

} // namespace

void register_update(CLI::App& app) {
    auto* cmd = app.add_subcommand("update", "Look on NVIDIA's site (or CVM_MIRROR) for releases newer than cvm's "
                         "registry and keep them in $CVM_ROOT/cache (the registry overlay)");
    auto max = std::make_shared<unsigned>(20);
    auto json = std::make_shared<bool>(false);
    cmd->add_option("--max", *max, "manifests and legacy folders fetched at most in this run (default 20)")
        ->check(CLI::Range(1u, 1000u));
    cmd->add_flag("--json", *json, "print what was added as JSON");
    cmd->callback([max, json] { run_update(*max, *json); });
}

} // namespace cvm::cli
