#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>
// One file per command in src/cli/; each adds its subcommand to the app.
namespace CLI {
class App;
}
namespace cvm {
struct Spec;
}

namespace cvm::cli {

void register_install(CLI::App& app);   // install.cpp
void register_install_forward(CLI::App& app); // install_forward.cpp: runs cvm-install
// Becomes cvm-install with `args` (its command first); install_forward.cpp.
[[noreturn]] void forward_to_install_program(const std::vector<std::string>& args);
void register_import(CLI::App& app);    // import.cpp
void register_uninstall(CLI::App& app); // uninstall.cpp
void register_list(CLI::App& app);      // list.cpp
void register_use(CLI::App& app);       // use.cpp
void register_current(CLI::App& app);   // current.cpp
void register_which(CLI::App& app);     // which.cpp
void register_exec(CLI::App& app);      // exec.cpp
void register_env(CLI::App& app);       // env.cpp: env, script, init, deactivate (+ the two below)
void register_hook_env(CLI::App& app);  // hook_env.cpp: the prompt hook's step (hidden)
void register_shell(CLI::App& app);     // shell_override.cpp: cvm shell
void register_rehash(CLI::App& app);    // rehash.cpp
void register_doctor(CLI::App& app);    // doctor.cpp
void register_probe(CLI::App& app);     // probe.cpp
void register_export(CLI::App& app);    // export.cpp
void register_lock(CLI::App& app);      // lock.cpp
void register_user_path(CLI::App& app); // user_path.cpp: hidden, for install.cmd
void register_cache(CLI::App& app);     // cache.cpp: cache clean
void register_verify(CLI::App& app);    // verify.cpp
void register_verify_forward(CLI::App& app); // install_forward.cpp: runs cvm-install
void register_update(CLI::App& app);    // update.cpp: cvm update (downloads, so with install)
void register_update_forward(CLI::App& app); // install_forward.cpp: runs cvm-install

void register_latest(CLI::App& app);    // latest.cpp

// Installs what `spec` names that is missing, in this process (install.cpp, in the programs that
// install: install_backend.h); returns the entries as `cvm install --json` lists them.
nlohmann::json install_missing(const cvm::Spec& spec);

struct ReleaseFilter;
// `cvm list --available [cuda|cudnn] [PREFIX] [--json]` (available.cpp): releases known to the
// registry.
void list_available(ReleaseFilter filter, bool json);

} // namespace cvm::cli
