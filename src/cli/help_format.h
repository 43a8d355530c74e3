#pragma once
// `--help` wrapped to the terminal: COLUMNS, else the width of the terminal on stdout, else 80.
#include <cstddef>
#include <string>

namespace CLI {
class App;
}

namespace cvm::cli {

// Each line of `text` wrapped at `width`; a wrapped line continues under its own text, or
// under the column where its second part starts ("  cvm use 12.4    select them...").
std::string wrap_text(const std::string& text, std::size_t width);

// The width help is wrapped to.
std::size_t help_columns();

// Gives `app` and all its commands a formatter that wraps to `columns`.
void wrap_help(CLI::App& app, std::size_t columns);

} // namespace cvm::cli
