#pragma once
// The environment of a selected combination: one function that the shims, `cvm exec`,
// `cvm env`, `cvm script`, the probe and the module exports all use, so they never disagree.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// One variable edit: set to a value, or unset (nullopt).
struct EnvChange {
    std::string name;
    std::optional<std::string> value;
};

// The folders of a combination, in the form the variables need.
struct Layout {
    fs::path cuda_path;                 // merged view, or the toolkit itself without cuDNN
    std::vector<fs::path> bin_dirs;     // first on PATH, in order
    std::vector<fs::path> lib_dirs;     // first on LD_LIBRARY_PATH (Linux), in order
    std::optional<fs::path> cudnn_path; // CUDNN_PATH
    std::string active;                 // CVM_ACTIVE
    Version toolkit_version;
};

// Computes the folders of `r` for `os`; `view` is the merged view's folder (see view.h), or
// empty when there is no cuDNN or it lives inside the toolkit.
Layout layout_of(const Resolved& r, const fs::path& view, platform::Os os);

// Rules for recognising another CUDA toolkit's folders on PATH / LD_LIBRARY_PATH.
// Cheap on purpose (the shim computes it): no entry files are read. Imported toolkits outside
// the store are recognised by what their folders hold (nvcc, libcudart, libcudnn).
struct ForeignDirs {
    std::vector<fs::path> store_layers; // anything under a layer is cvm's...
    fs::path shims_dir;                 // ...except the shims folder, which stays
    bool probe_filesystem = true;       // look for nvcc / libcudart / libcudnn in other folders
};

// True when `dir` (a PATH or LD_LIBRARY_PATH element) belongs to a CUDA toolkit or cuDNN build.
// System folders (/usr/bin, /usr/lib, C:\Windows...) never count, whatever they hold.
bool is_foreign_cuda_dir(const std::string& dir, const ForeignDirs& rules, platform::Os os,
                         bool library_dir);

// True when `dir` is a folder the whole machine shares (/usr/bin, /bin, /usr/local/bin, /usr/lib,
// /usr/lib/x86_64-linux-gnu, C:\Windows, C:\Windows\System32...). cvm never adds, moves or
// removes such a folder on PATH or LD_LIBRARY_PATH, and never makes shims from one.
bool is_system_folder(const std::string& dir, platform::Os os);

// The fixed lists behind is_system_folder and is_foreign_cuda_dir, for code that writes the same
// rules in a shell's language (shell.cpp): Linux system folders (multiarch ones are matched by
// pattern besides), the libraries that mark a CUDA or cuDNN library folder, and the files that
// mark a CUDA or cuDNN folder on Windows' PATH.
const std::vector<const char*>& linux_system_dirs();
const std::vector<const char*>& linux_cuda_library_probes();
const std::vector<const char*>& windows_cuda_bin_probes();

// True when `dir` is a prefix the whole machine shares (/, /usr, /usr/local, C:\Windows): never
// a value for CUDA_PATH or CUDA_HOME.
bool is_system_prefix(const std::string& dir, platform::Os os);

// Splits a PATH-style list.
std::vector<std::string> split_path_list(const std::string& list, platform::Os os);
std::string join_path_list(const std::vector<std::string>& items, platform::Os os);

// The variable edits that activate `layout`, given the current values of PATH and
// LD_LIBRARY_PATH. System folders (is_system_folder) among the layout's folders are not
// prepended, and those in the current values stay where they are. A layout whose cuda_path is a
// system prefix (a toolkit registered as /usr) unsets CUDA_PATH, CUDA_HOME and CUDA_PATH_Vx_y
// rather than pointing them at the whole system. Order is stable: CUDA_PATH, CUDA_HOME, CUDA_PATH_Vx_y, CUDNN_PATH, PATH,
// LD_LIBRARY_PATH, CVM_ACTIVE.
std::vector<EnvChange> compute_environment(const Layout& layout,
                                           const std::optional<std::string>& current_path,
                                           const std::optional<std::string>& current_ld_path,
                                           const ForeignDirs& rules, platform::Os os);

// The ForeignDirs rules of a store.
ForeignDirs foreign_dirs_of(const Store& store);

// Applies edits to a copy of an environment map (names compared as the OS does).
void apply_changes(std::map<std::string, std::string>& env, const std::vector<EnvChange>& changes,
                   platform::Os os = platform::host_os());

} // namespace cvm
