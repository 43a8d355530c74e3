#pragma once
#include <string>
// One file per command in src/cli/; each adds its subcommand to the app.
namespace CLI {
class App;
}

namespace cvm::cli {

void register_install(CLI::App& app);   // install.cpp
void register_install_forward(CLI::App& app); // install_forward.cpp: runs cvm-install
void register_import(CLI::App& app);    // import.cpp
void register_uninstall(CLI::App& app); // uninstall.cpp
void register_list(CLI::App& app);      // list.cpp
void register_use(CLI::App& app);       // use.cpp
void register_current(CLI::App& app);   // current.cpp
void register_which(CLI::App& app);     // which.cpp
void register_exec(CLI::App& app);      // exec.cpp
void register_env(CLI::App& app);       // env.cpp: env, script, init, deactivate
void register_rehash(CLI::App& app);    // rehash.cpp
void register_doctor(CLI::App& app);    // doctor.cpp
void register_probe(CLI::App& app);     // probe.cpp
void register_export(CLI::App& app);    // export.cpp
void register_lock(CLI::App& app);      // lock.cpp
void register_verify(CLI::App& app);    // verify.cpp
void register_verify_forward(CLI::App& app); // install_forward.cpp: runs cvm-install

// `cvm list --available [cuda|cudnn] [--json]` (available.cpp): releases known to the registry.
void list_available(const std::string& kind, bool json);

} // namespace cvm::cli
