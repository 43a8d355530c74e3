// `cvm __add-user-path DIR...` (hidden): appends the folders the user's PATH lacks to
// HKCU\Environment\Path, for the Windows zip's install.cmd (cmd alone cannot read a long
// REG_EXPAND_SZ value without expanding or cutting it). Prints each folder it added.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "platform/user_path.h"

namespace cvm::cli {

void register_user_path(CLI::App& app) {
    auto* cmd = app.add_subcommand("__add-user-path", "append folders to the user's PATH (Windows)");
    cmd->group("");
    auto dirs = std::make_shared<std::vector<std::string>>();
    cmd->add_option("dirs", *dirs, "folders")->required();
    cmd->callback([dirs] {
        std::vector<std::string> added;
        try {
            added = platform::add_to_user_path(*dirs);
        } catch (const std::runtime_error& e) {
            throw Failure(std::string("__add-user-path: ") + e.what());
        }
        for (const auto& d : added) std::printf("%s\n", d.c_str());
    });
}

} // namespace cvm::cli
