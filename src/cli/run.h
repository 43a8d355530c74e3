#pragma once
// The front both programs share (main.cpp: cvm; main_install.cpp: cvm-install): one CLI11 app
// with cvm's name and version, the commands both register, and run(), which answers the command
// line and turns errors into the contract's exit codes.
namespace CLI {
class App;
}

namespace cvm::cli {

// cvm's name, description and -V/--version; bare `cvm` prints the help (usage.cpp).
void setup_app(CLI::App& app);

// Every command but install, verify and update (which each program registers its own way).
void register_commands(CLI::App& app);

// Parses argv and runs the command: 0 or the command's exit code, 2 for usage, the contract's
// codes for errors (errors.cpp).
int run(CLI::App& app, int argc, char** argv);

} // namespace cvm::cli
