// cvm-install (Linux): the commands that need libarchive and libcurl, which cvm hands over:
// install, verify, update, `use --install` and `export --oci` (src/cli/CMakeLists.txt says why).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/install_backend.h"
#include "cli/run.h"

int main(int argc, char** argv) {
    using namespace cvm::cli;
    CLI::App app;
    setup_app(app);
    install_backend().install_missing = &install_missing;
    install_backend().export_oci = &export_oci_command;
    register_install(app);
    register_use(app);
    register_verify(app);
    register_update(app);
    register_export(app);
    return run(app, argc, argv);
}
