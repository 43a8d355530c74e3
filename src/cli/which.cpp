#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "activation/launch_plan.h"
#include "activation/shims.h"
#include "text/terminal_text.h"
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
        const ToolName name = tool_name(*tool);
        // {"tool": "nvcc", "path": ..., "source": "toolkit" | "path"}
        auto print = [&](const fs::path& found, const char* source) {
            if (*json)
                print_json({{"tool", *tool}, {"path", found.u8string()}, {"source", source}});
            else
                std::printf("%s\n", escape_controls(found.u8string()).c_str());
        };
        // The shim's plan (activation/launch_plan.h), fall-through included.
        LaunchPlan plan = plan_launch(name.file, name.shown, sel, [&store]() -> const Store& { return store; },
                                      platform::file_id(shim_binary()));
        if (plan.kind == LaunchPlan::Kind::Refuse) throw Failure(plan.message, plan.error_code);
        if (plan.kind == LaunchPlan::Kind::Toolkit) return print(plan.program, "toolkit");
        fs::path found = find_system_tool(name.file, platform::get_env("PATH").value_or(""),
                                          store.shims_dir(), shim_binary());
        if (found.empty()) throw Failure(plan.message, "not_found");
        print(found, "path");
    });
}

} // namespace cvm::cli
