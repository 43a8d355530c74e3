#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "compat/auto_host_compiler.h"
#include "store/resolve.h"
#include "activation/shims.h"
#include "text/terminal_text.h"
#include "platform/platform.h"

namespace cvm::cli {

static const char* origin_kind(Selection::Origin o) {
    switch (o) {
    case Selection::Origin::Variable:
        return "variable";
    case Selection::Origin::ProjectFile:
        return "file";
    case Selection::Origin::Global:
        return "global";
    case Selection::Origin::Argument:
        return "argument";
    case Selection::Origin::None:
        break;
    }
    return "none";
}

void register_current(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "current", "Show the selected toolkit, cuDNN and NCCL, and where the choice came from. "
                   "The selection order: CVM_VERSION (cvm shell), then the nearest .cudaversion from this folder upward, then the global default (cvm use -g); a SPEC given to a command comes first.");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([json] {
        Store store = open_store();
        Selection sel = current_selection(store, std::nullopt);
        nlohmann::json doc;
        doc["origin"] = origin_kind(sel.origin);
        if (sel.origin == Selection::Origin::ProjectFile ||
            sel.origin == Selection::Origin::Global) {
            doc["file"] = sel.file.u8string();
            doc["line"] = sel.line;
        }
        // Nothing selected: the shims run the system's programs (shims/shim.cpp), so the answer
        // is "system", as `pyenv version` says, with where nvcc comes from then; exit 0.
        if (sel.origin == Selection::Origin::None) {
            std::string nvcc = platform::host_os() == platform::Os::Windows ? "nvcc.exe" : "nvcc";
            fs::path found = find_system_tool(nvcc, platform::get_env("PATH").value_or(""),
                                              store.shims_dir(), shim_binary());
            doc["spec"] = nullptr;
            doc["active"] = "system";
            doc["nvcc"] = found.empty() ? nlohmann::json(nullptr) : nlohmann::json(found.u8string());
            if (*json) return print_json(doc);
            std::printf("system (nothing is selected; the shims run the programs on PATH outside cvm: %s)\n",
                        found.empty() ? "no nvcc there"
                                      : escape_controls("nvcc is " + found.u8string()).c_str());
            return;
        }
        // Failures end as every command's do (errors.h): one line, and with --json the
        // {"error": {"code", "message"}} document.
        doc["spec"] = sel.spec.str();
        if (sel.spec.system) {
            doc["active"] = "system";
            if (*json) print_json(doc);
            else
                std::printf("system (set by %s)\n", escape_controls(sel.origin_text()).c_str());
            return;
        }
        Resolved r;
        try {
            r = resolve(store, sel.spec);
        } catch (const ResolveError& e) {
            throw Failure(sel.not_installed_text(e.what()), "not_installed");
        }
        doc["active"] = r.active();
        doc["toolkit"] = entry_json(store, r.toolkit);
        doc["cudnn"] = r.cudnn ? entry_json(store, *r.cudnn) : nlohmann::json(nullptr);
        doc["nccl"] = r.nccl ? entry_json(store, *r.nccl) : nlohmann::json(nullptr);
        // The answer kept by `cvm use` / `cvm rehash`: no compiler is run here once it is known.
        const auto compiler = compat::kept_host_compiler(store, r.toolkit);
        if (compiler && !compiler->ccbin.empty())
            doc["host_compiler"] = {{"ccbin", compiler->ccbin},
                                    {"via", compiler->via_env ? "NVCC_CCBIN" : "-ccbin"},
                                    {"why", compiler->why}};
        else
            doc["host_compiler"] = nullptr;
        if (*json) {
            print_json(doc);
            return;
        }
        std::printf("%s (set by %s)\n", r.active().c_str(),
                    escape_controls(sel.origin_text()).c_str());
        auto layer_note = [&](const Entry& e) {
            return e.layer == 0 ? std::string()
                                : "  [read-only store " + store.layers()[e.layer].u8string() + "]";
        };
        std::printf("  cuda   %-22s %s%s\n", r.toolkit.id.c_str(),
                    escape_controls(r.toolkit.path.u8string()).c_str(),
                    escape_controls(layer_note(r.toolkit)).c_str());
        if (r.cudnn)
            std::printf("  cudnn  %-22s %s%s\n", r.cudnn->id.c_str(),
                        escape_controls(r.cudnn->path.u8string()).c_str(),
                        escape_controls(layer_note(*r.cudnn)).c_str());
        if (r.nccl)
            std::printf("  nccl   %-22s %s%s\n", r.nccl->id.c_str(),
                        escape_controls(r.nccl->path.u8string()).c_str(),
                        escape_controls(layer_note(*r.nccl)).c_str());
        if (compiler && !compiler->line.empty())
            std::printf("  %s\n", escape_controls(compiler->line).c_str());
    });
}

} // namespace cvm::cli
