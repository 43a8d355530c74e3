#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "compat/auto_host_compiler.h"
#include "core/shims.h"

namespace cvm::cli {

void register_rehash(CLI::App& app) {
    auto* cmd = app.add_subcommand("rehash", "Make a shim for every CUDA program of every installed toolkit, and remove stale ones");
    cmd->callback([] {
        Store store = open_store();
        fs::path shim = shim_binary();
        std::error_code ec;
        if (!fs::exists(shim, ec))
            throw Failure("the shim launcher " + shim.u8string() + " is missing; reinstall cvm (scripts/setup.sh)");
        RehashResult r = rehash(store, shim);
        for (const auto& w : r.warnings) note("warning: " + w);
        // The shims hand nvcc the host compiler chosen here (src/compat/ccbin.h).
        for (const Entry& toolkit : store.list(Kind::Cuda)) compat::refresh_host_compiler(store, toolkit);
        note(std::to_string(r.total) + " shims in " + store.shims_dir().u8string() + " (" +
             std::to_string(r.created) + " new, " + std::to_string(r.removed) + " removed)");
    });
}

} // namespace cvm::cli
