#pragma once
// The entry file of the store, <layer>/<kind>/<id>/entry (store.h): an Entry (entry.h) as
// key=value lines, plain text so the shim can read it without a parser library.
#include <filesystem>
#include <string>
#include <vector>

#include "store/entry.h"

namespace cvm {

namespace fs = std::filesystem;

// The entry file (<layer>/<kind>/<id>/entry) of an Entry (entry.h).
std::string serialize_entry(const Entry& e);
// Parses an entry file's text; `dir` is the entry folder (for a relative or absent path=).
// Throws std::runtime_error naming `source` on malformed content.
Entry parse_entry(const std::string& text, const fs::path& dir, const std::string& source);

// The parts of `s` between the `sep` characters, none for an empty `s`: the entry file's lists
// (include=, lib=, bin=: ';'), and the lists of store folders Store::from_environment reads.
std::vector<std::string> split_list(const std::string& s, char sep);

} // namespace cvm
