#pragma once
// The shims folder: one launcher per CUDA program of every installed toolkit, and where a shim
// goes when the selection has no program of its name (fall-through).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// A program that ships with cvm (cvm-shim, cvm-probe, cvm-install): beside the running cvm, else
// in <exe dir>/../libexec/cvm/. `name` is without the .exe suffix.
fs::path companion_program(const std::string& name);

// Where the shim launcher binary is: CVM_SHIM_BINARY, else companion_program("cvm-shim").
fs::path shim_binary();

// True for a name that belongs to the machine rather than to CUDA: host compilers and linkers
// (gcc, g++, cc, c++, clang*, cl, ld, x86_64-linux-gnu-gcc-12...), shells and interpreters. Some
// toolkits ship wrappers of these (Debian's /usr/lib/nvidia-cuda-toolkit/bin/gcc); a shim of that
// name would stand in front of every build on the machine. Case and a .exe suffix are ignored.
bool is_host_program(const std::string& name);

// The shims a store needs, and what rehash should tell the user.
struct ToolkitTools {
    std::vector<std::string> names;    // sorted, no duplicates; on Windows with .exe, lower case
    std::vector<std::string> warnings; // one line each: an entry whose bin is a system folder
};

// Names of the CUDA programs every toolkit in the store provides: executables of their bin
// folders, less host programs (is_host_program). A bin folder that is a shared system folder
// (/usr/bin...) is never listed; the entry gets a warning instead.
ToolkitTools toolkit_tools(const Store& store);

// Ids of the toolkits whose bin folders hold `tool` (reads every toolkit entry: for error
// messages only).
std::vector<std::string> toolkits_with(const Store& store, const std::string& tool);

// What a shim falls through to: the first `tool` on `path_list` (a PATH value) that is a regular
// executable, outside the shims folder, and not the launcher itself (`self`, compared by file
// identity so links to it are skipped too). PATHEXT is honoured on Windows. Empty when none.
fs::path find_system_tool(const std::string& tool, const std::string& path_list,
                          const fs::path& shims_dir, const std::optional<platform::FileId>& self);
// What the shim's fall-through ends by running, for the commands that tell it (`cvm which`, `cvm
// current`): as above, and a copy of the launcher (`self`: the same size and bytes, say cvm-shim
// copied as ~/bin/nvcc), which would itself fall through, is passed over too.
fs::path find_system_tool(const std::string& tool, const std::string& path_list,
                          const fs::path& shims_dir, const fs::path& self);

// The variable a shim sets when it falls through: "DEPTH:PID". A copy of cvm-shim elsewhere on
// PATH that the fall-through reaches sees it and counts; see shim_depth().
extern const char* const kShimDepthVariable;
// Consecutive shims that have run each other, from the variable's value. On Linux only a value
// set for this very process counts (exec keeps the pid), so the programs a tool starts begin at 0.
int shim_depth(const std::optional<std::string>& value, std::uint64_t pid);
// More than this many shims in a row is a loop (two copies of cvm-shim on PATH).
constexpr int kMaxShimDepth = 5;

struct RehashResult {
    size_t created = 0, removed = 0, total = 0;
    std::vector<std::string> warnings;
};

// Makes $CVM_ROOT/shims hold exactly one shim per tool. Links to the shim binary where the OS
// allows, else hard links or copies of it.
RehashResult rehash(const Store& store, const fs::path& shim);

} // namespace cvm
