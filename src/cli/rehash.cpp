#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "compat/auto_host_compiler.h"
#include "activation/environment.h"
#include "activation/shims.h"
#include "platform/platform.h"
#include "text/path_list.h"

namespace cvm::cli {

void register_rehash(CLI::App& app) {
    auto* cmd = app.add_subcommand("rehash", "Make a shim for every CUDA program of every installed toolkit, and remove stale ones");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([json] {
        Store store = open_store();
        fs::path shim = shim_binary();
        std::error_code ec;
        if (!fs::exists(shim, ec))
            throw Failure("the shim launcher " + shim.u8string() + " is missing; reinstall cvm (scripts/setup.sh)");
        RehashResult r = rehash(store, shim);
        for (const auto& w : r.warnings) note("warning: " + w);
        // The shims hand nvcc the host compiler chosen here (activation/host_compiler_choice.h).
        for (const Entry& toolkit : store.list(Kind::Cuda)) compat::refresh_host_compiler(store, toolkit);
        note(std::to_string(r.total) + " shims in " + store.shims_dir().u8string() + " (" +
             std::to_string(r.created) + " new, " + std::to_string(r.removed) + " removed)");
        if (*json) {
            print_json({{"shims", r.total}, {"created", r.created}, {"removed", r.removed},
                        {"folder", store.shims_dir().u8string()}, {"warnings", r.warnings}});
            return;
        }
        bool on_path = false;
        for (const auto& dir : split_path_list(platform::get_env("PATH").value_or(""), platform::host_os())) {
            std::error_code eq;
            on_path |= !dir.empty() && fs::equivalent(fs::u8path(dir), store.shims_dir(), eq);
        }
        if (!on_path)
            hint("eval \"$(cvm init bash)\"", "puts the shims on PATH; zsh, fish, pwsh: cvm init SHELL");
    });
}

} // namespace cvm::cli
