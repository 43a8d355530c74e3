#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"

namespace cvm::cli {

void register_use(CLI::App& app) {
    auto* cmd = app.add_subcommand("use", "Select CUDA[+CUDNN] for this folder (.cudaversion) or globally");
    auto spec = std::make_shared<std::string>();
    auto global = std::make_shared<bool>(false);
    cmd->add_option("spec", *spec, "e.g. 11.2, 12.4.1+9, 11.2+8.1.0.77, system")->required();
    cmd->add_flag("--global,-g", *global, "write the global default ($CVM_ROOT/version)");
    cmd->callback([spec, global] {
        Spec s = spec_argument(*spec);
        Store store = open_store();
        fs::path file;
        if (*global) {
            fs::create_directories(store.root());
            file = store.global_version_file();
        } else {
            file = fs::current_path() / ".cudaversion";
        }
        write_version_file(file, s);
        std::string where = *global ? "globally" : "in " + file.u8string();
        if (s.system) {
            note("selected the system toolkit " + where);
            return;
        }
        try {
            Resolved r = resolve(store, s);
            note("selected " + r.active() + " " + where);
        } catch (const ResolveError& e) {
            note("wrote " + s.str() + " " + where + ", but " + e.what());
        }
    });
}

} // namespace cvm::cli
