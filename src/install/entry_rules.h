#pragma once
// The rules every archive entry is held to (entry_guard.cpp implements them): the entry's path, a
// link's target, the mode written, links on disk that must stay inside. Exposed for tests and
// fuzzing; extract.h includes this.
#include "install/archive_types.h"

#include <filesystem>
#include <string>
#include <vector>

namespace cvm::install {

// Entry-path rules, exposed for tests and fuzzing: returns the normalised relative path
// ('/'-separated, no "." components) or an empty string with `why` set when refused.
// An entry naming the root itself ("./") yields "." .
std::string normalize_entry_path(const std::string& raw, std::string* why);

// Where a symlink at `link_path` (normalised, relative) pointing to `target` ends up,
// resolved lexically from the link's folder; empty with `why` set when it leaves the root
// or is absolute.
std::string resolve_link_target(const std::string& link_path, const std::string& target,
                                std::string* why);

// The mode an extracted file or folder gets from the archive's `perm`: masked like any file the
// user creates, never group- or world-writable, with what its owner needs to read and clean up.
unsigned extracted_mode(unsigned perm, bool directory);

// Each symlink among `entries`, followed on disk below `root` (through the others too), must end
// inside `root`; throws InstallError (input) naming the archive (`name`) and the entry.
void verify_symlinks(const std::filesystem::path& root, const std::vector<ExtractedEntry>& entries,
                     const std::string& name);

} // namespace cvm::install
