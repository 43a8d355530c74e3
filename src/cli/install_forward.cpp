// `cvm install ...` on Linux: hands the whole command line to the companion program cvm-install
// (see src/cli/CMakeLists.txt for why it is a separate program).
#include <CLI/CLI.hpp>

#include "cli/cli_model.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "core/shims.h"
#include "platform/platform.h"

namespace cvm::cli {

void register_install_forward(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "install", "Install a CUDA toolkit or cuDNN build: FILE|URL, `cuda VERSION`, `cudnn VERSION --cuda N`, or SPEC");
    cmd->prefix_command();
    cmd->allow_extras();
    cmd->set_help_flag(); // `cvm install --help` is answered by cvm-install itself
    forward_model(cmd, "cvm-install"); // completion and the man page ask cvm-install too
    cmd->callback([cmd] {
        fs::path program = companion_program("cvm-install");
        if (!platform::is_executable(program))
            throw Failure("install: " + program.u8string() + " is missing; reinstall cvm (scripts/setup.sh)");
        std::vector<std::string> args{program.u8string(), "install"};
        if (quiet_flag()) args.push_back("--quiet");
        for (const auto& a : cmd->remaining()) args.push_back(a);
        platform::exec_replace(program, args, platform::environment());
    });
}

} // namespace cvm::cli
