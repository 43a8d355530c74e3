#pragma once
// The projects cvm knows: every .cudaversion that `cvm use` wrote, one absolute path a line in
// $CVM_ROOT/projects. `cvm uninstall` reads them to ask before removing what a project selects.
// The list is a hint, never the truth: each file is read again when it is needed, and entries
// whose file is gone (or is no longer a readable version file) are dropped.
#include <filesystem>
#include <vector>

#include "project/selection.h"
#include "store/store.h"

namespace cvm {

namespace fs = std::filesystem;

fs::path projects_file(const Store& store);

// Adds `version_file` (made absolute) to the list. Best effort: a store that cannot be written
// only loses the record, never the `cvm use` that wrote the file.
void remember_project(const Store& store, const fs::path& version_file);

// The selections the known projects hold now, in the order they were recorded. Rewrites the list
// without the entries whose file is gone, unreadable or holds no valid spec (best effort).
std::vector<Selection> project_selections(const Store& store);

} // namespace cvm
