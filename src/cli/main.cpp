// cvm: every command. On Linux install, verify, update and `export --oci` are handed to
// cvm-install (main_install.cpp; src/cli/CMakeLists.txt says why); on Windows cvm does them itself.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/install_backend.h"
#include "cli/run.h"

int main(int argc, char** argv) {
    using namespace cvm::cli;
    CLI::App app;
    setup_app(app);
#if defined(CVM_SPLIT_INSTALL)
    install_backend().forward = true;
    register_install_forward(app);
    register_verify_forward(app);
    register_update_forward(app);
#elif defined(CVM_ONE_PROGRAM)
    install_backend().install_missing = &install_missing;
    register_install(app);
    register_verify(app);
    register_update(app);
#endif
    register_commands(app);
    return run(app, argc, argv);
}
