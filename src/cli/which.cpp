#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "core/entry_trust.h"
#include "core/shims.h"
#include "core/terminal_text.h"
#include "core/view.h"
#include "platform/platform.h"

namespace cvm::cli {

void register_which(CLI::App& app) {
    auto* cmd = app.add_subcommand("which", "Print the absolute path the shim for TOOL would run");
    auto tool = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("tool", *tool, "e.g. nvcc")->required();
    cmd->add_flag("--json", *json, "print one JSON document");
    cmd->callback([tool, json] {
        Store store = open_store();
        Selection sel = current_selection(store, std::nullopt);
        std::string name = *tool;
        if (platform::host_os() == platform::Os::Windows && fs::u8path(name).extension().empty()) name += ".exe";
        // {"tool": "nvcc", "path": ..., "source": "toolkit" | "path"}
        auto print = [&](const fs::path& found, const char* source) {
            if (*json)
                print_json({{"tool", *tool}, {"path", found.u8string()}, {"source", source}});
            else
                std::printf("%s\n", escape_controls(found.u8string()).c_str());
        };
        // The same choices as the shim (shims/shim.cpp), fall-through included.
        auto on_path = [&](const std::string& missing) {
            fs::path found = find_system_tool(name, platform::get_env("PATH").value_or(""),
                                              store.shims_dir(), shim_binary());
            if (found.empty()) throw Failure(missing, "not_found");
            print(found, "path");
        };
        if (is_host_program(name))
            return on_path(*tool + " is not on PATH outside cvm's shims");
        if (sel.origin == Selection::Origin::None)
            return on_path("no CUDA version is selected here and " + *tool +
                           " is not on PATH outside cvm's shims; run `cvm use SPEC`");
        if (sel.spec.system)
            return on_path(*tool + " is not on PATH ('system' is selected by " + sel.origin_text() + ")");
        Resolved r = resolve_selection(store, sel);
        Layout layout = layout_of(r, view_path(store, r), platform::host_os());
        for (const auto& dir : layout.tool_dirs) {
            fs::path candidate = dir / fs::u8path(name);
            if (!platform::is_executable(candidate)) continue;
            check_entry_file_trusted(r.toolkit, candidate); // as the shim would run it
            return print(candidate, "toolkit");
        }
        auto others = toolkits_with(store, name);
        if (!others.empty()) {
            std::string ids;
            for (const auto& id : others) ids += (ids.empty() ? "" : ", ") + id;
            throw Failure(*tool + " is not part of CUDA " + r.toolkit.id + " (selected by " +
                          sel.origin_text() + ") but of CUDA " + ids + "; run `cvm use SPEC` to select one of them",
                          "not_found");
        }
        on_path(*tool + " is not part of CUDA " + r.toolkit.id + " (selected by " + sel.origin_text() +
                ") nor on PATH outside cvm's shims; its tools are in " +
                (layout.bin_dirs.empty() ? r.toolkit.path : layout.bin_dirs.front()).u8string());
    });
}

} // namespace cvm::cli
