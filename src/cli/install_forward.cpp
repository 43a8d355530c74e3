// `cvm install ...` and `cvm verify ...` on Linux: hand the whole command line to the companion
// program cvm-install (see src/cli/CMakeLists.txt for why it is a separate program).
#include <CLI/CLI.hpp>

#include "cli/cli_model.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/install_backend.h"
#include "activation/shims.h"
#include "platform/platform.h"

namespace cvm::cli {

namespace {

// Hands `cvm NAME ...` to cvm-install, which answers it (and its --help) itself.
void forward_to_companion(CLI::App& app, const std::string& name, const std::string& description) {
    auto* cmd = app.add_subcommand(name, description);
    cmd->prefix_command();
    cmd->allow_extras();
    cmd->set_help_flag(); // `cvm NAME --help` is answered by cvm-install itself
    forward_model(cmd, "cvm-install"); // completion and the man page ask cvm-install too
    cmd->callback([cmd, name] {
        std::vector<std::string> args{name};
        if (quiet_flag()) args.push_back("--quiet");
        for (const auto& a : cmd->remaining()) args.push_back(a);
        forward_to_install_program(args);
    });
}

} // namespace

void register_install_forward(CLI::App& app) {
    forward_to_companion(app, "install",
                         "Install a CUDA toolkit, cuDNN or NCCL build: FILE|URL, `cuda VERSION`, "
                         "`cudnn VERSION --cuda N`, `nccl VERSION --cuda N`, or SPEC");
}

void register_verify_forward(CLI::App& app) {
    // Verifying hashes files: the digest lives with the installer.
    forward_to_companion(app, "verify",
                         "Check that installed files are still what was installed (sizes, "
                         "SHA-256, links of the merged views); exit 1 when something is damaged");
}

void register_update_forward(CLI::App& app) {
    // Reading the mirror needs the downloader, which lives with the installer.
    forward_to_companion(app, "update",
                         "Look on NVIDIA's site (or CVM_MIRROR) for releases newer than cvm's "
                         "registry and keep them in $CVM_ROOT/cache (the registry overlay)");
}

InstallBackend& install_backend() {
    static InstallBackend backend;
    return backend;
}

void forward_to_install_program(const std::vector<std::string>& args) {
    fs::path program = companion_program("cvm-install");
    if (!platform::is_executable(program))
        throw Failure(args.front() + ": " + program.u8string() + " is missing; reinstall cvm (scripts/setup.sh)");
    std::vector<std::string> argv{program.u8string()};
    argv.insert(argv.end(), args.begin(), args.end());
    platform::exec_replace(program, argv, platform::environment());
}

} // namespace cvm::cli
