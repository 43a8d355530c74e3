#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "platform/platform.h"

namespace cvm::cli {

void register_exec(CLI::App& app) {
    auto* cmd = app.add_subcommand("exec", "Run CMD in the selected environment; its exit code is cvm's");
    auto version = std::make_shared<std::string>();
    auto command = std::make_shared<std::vector<std::string>>();
    cmd->add_option("--version", *version, "use this SPEC instead of the selection");
    cmd->add_option("command", *command, "CMD [ARGS...] (after --)")->required();
    cmd->prefix_command();
    cmd->callback([version, command, cmd] {
        std::vector<std::string> args = *command;
        // CLI11 2.1 reports the `--` separator itself in remaining(), first.
        std::vector<std::string> rest = cmd->remaining();
        if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
        for (const auto& extra : rest) args.push_back(extra);
        if (!args.empty() && args.front() == "--") args.erase(args.begin());
        if (args.empty()) throw UsageError("exec: nothing to run; usage: cvm exec [--version SPEC] -- CMD [ARGS...]");
        Store store = open_store();
        Selection sel = current_selection(store, version->empty() ? std::nullopt : std::optional<std::string>(*version));
        auto env = platform::environment();
        if (!(sel.origin != Selection::Origin::None && sel.spec.system)) {
            Resolved r = resolve_selection(store, sel);
            apply_changes(env, selection_changes(store, r));
        }
        std::string path;
        for (const auto& [k, v] : env)
            if (platform::env_name_equal(k, "PATH")) path = v;
        fs::path program = platform::find_executable(args[0], path);
        if (program.empty()) throw Failure("exec: " + args[0] + " was not found on the selection's PATH");
        platform::exec_replace(program, args, env);
    });
}

} // namespace cvm::cli
