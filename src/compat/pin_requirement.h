#pragma once
// What every reader of a project file (compat/project_pins.h) shares: a pin's place and its
// errors ("FILE:LINE: what"), and the pin of one PEP 508 requirement ("torch==2.4.1",
// "torch @ https://.../torch-2.4.1-...whl"), as requirements files, pyproject.toml and pip: lists
// write them.
#include <optional>
#include <string>
#include <string_view>

#include "compat/project_pins.h"

namespace cvm::compat {

// "requirements.txt:3".
std::string file_line(const std::string& file, unsigned line);

// Throws ProjectFileError "FILE:LINE: what".
[[noreturn]] void fail_at(const std::string& file, unsigned line, const std::string& what);

// A pin of `fw` written as `text` (kept trimmed) at FILE:LINE, without clauses yet.
ProjectPin make_pin(std::string fw, std::string_view text, const std::string& file, unsigned line);

// The pin of one PEP 508 requirement naming a framework; nullopt for other packages. Throws
// ProjectFileError for a framework's range or URL that cannot be read.
std::optional<ProjectPin> requirement_pin(std::string_view text, const std::string& file,
                                          unsigned line);

} // namespace cvm::compat
