#pragma once
// The shims folder: one launcher per executable of every installed toolkit.
#include <filesystem>
#include <string>
#include <vector>

#include "core/store.h"

namespace cvm {

namespace fs = std::filesystem;

// A program that ships with cvm (cvm-shim, cvm-probe, cvm-install): beside the running cvm, else
// in <exe dir>/../libexec/cvm/. `name` is without the .exe suffix.
fs::path companion_program(const std::string& name);

// Where the shim launcher binary is: CVM_SHIM_BINARY, else companion_program("cvm-shim").
fs::path shim_binary();

// Names of the tools every toolkit in the store provides (no duplicates, sorted). On Windows
// names keep their .exe suffix.
std::vector<std::string> toolkit_tools(const Store& store);

// What `system` runs: the first `tool` on `path_list` (a PATH value) outside the shims folder
// that is not the launcher `self`. Empty path when there is none.
fs::path find_system_tool(const std::string& tool, const std::string& path_list,
                          const fs::path& shims_dir, const fs::path& self);

struct RehashResult {
    size_t created = 0, removed = 0, total = 0;
};

// Makes $CVM_ROOT/shims hold exactly one shim per tool. Links to the shim binary where the OS
// allows, else hard links or copies of it.
RehashResult rehash(const Store& store, const fs::path& shim);

} // namespace cvm
