#pragma once
// cvm(1), written from the command model (cli_model.h) and the help's examples and variables,
// so that the page says what the program does: `cvm __man [FILE]`, run by the build.
#include <string>

#include "cli/cli_model.h"

namespace cvm::cli {

std::string render_man(const CommandModel& root);

} // namespace cvm::cli
