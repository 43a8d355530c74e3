#pragma once
// The types of shells/shell.h that the shell files (shell_posix.cpp, shell_fish.cpp, ...) take as
// well: below both shell.cpp and them, so that neither includes the other.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "activation/environment.h"
#include "platform/platform.h"

namespace cvm {

enum class Shell { Bash, Zsh, Fish, Pwsh, Cmd };

// A value or name a shell cannot carry (a line break for cmd, a NUL anywhere).
class ShellError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// [A-Za-z_][A-Za-z0-9_]*
bool is_variable_name(std::string_view name);

// A standalone activation script: it needs no cvm at run time. PATH (and LD_LIBRARY_PATH when
// `changes` has it) are computed when the script runs: other CUDA toolkits' folders are removed
// by the rules of is_foreign_cuda_dir as far as a shell can follow them, then the selection's
// folders go first. Every other change is set as given.
struct ActivationScript {
    std::string active;                // CVM_ACTIVE, for the header
    std::string file_name;             // cmd/pwsh: how the script names itself in its usage text
    std::vector<EnvChange> changes;    // compute_environment's list
    std::vector<std::string> bin_dirs; // first on PATH
    std::vector<std::string> lib_dirs; // first on LD_LIBRARY_PATH and LIBRARY_PATH
    std::vector<std::string> include_dirs; // first on CPATH
    std::vector<std::string> store_layers; // folders under which everything is another toolkit's
    std::string shims_dir;                 // ...except this one, which stays
    platform::Os os = platform::host_os();
};

// What `cvm init` needs to know about the store.
struct InitOptions {
    std::string shims_dir;
    std::string exe; // the cvm the functions run (empty: `cvm` on PATH)
    platform::Os os = platform::host_os();
    // The prompt hook (off: `cvm init --no-hook`). On every prompt it looks for the nearest
    // .cudaversion upward (a `stat` a folder), and runs `cvm hook-env` only when the folder, the
    // file found, CVM_VERSION or a manual activation changed, or when the file found (else
    // `global_file`) or one of `watched` is not older than the shell's stamp file
    // `stamp_dir/<shell pid>`, which `cvm hook-env` touches before it reads anything.
    bool hook = true;
    std::string global_file;          // the global default ($CVM_ROOT/version)
    std::vector<std::string> watched; // the store's folders of toolkits and cuDNN builds
    std::string stamp_dir;
};

} // namespace cvm
