#pragma once
// The environment of a selected combination: one function that the shims, `cvm exec`,
// `cvm env`, `cvm script`, the probe and the module exports all use, so they never disagree.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/resolve.h"
#include "store/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// One variable edit: set to a value, or unset (nullopt).
struct EnvChange {
    std::string name;
    std::optional<std::string> value;
};

// A variable's value in some environment (nullopt: unset).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// The host compiler cvm hands to the selection's nvcc (host_compiler_choice.h keeps the choice).
struct HostCompiler {
    std::string path;     // the C++ compiler; empty: nothing to hand over
    bool via_env = false; // the nvcc reads NVCC_CCBIN (else -ccbin, which only a shim can add)
};

// The folders of a combination, in the form the variables need.
struct Layout {
    fs::path cuda_path;              // merged view, or the toolkit itself without cuDNN
    std::vector<fs::path> bin_dirs;  // first on PATH, in order (the view's bin when there is one)
    std::vector<fs::path> tool_dirs; // where the programs really are (the toolkit's own bin)
    std::vector<fs::path> lib_dirs;  // first on LD_LIBRARY_PATH and LIBRARY_PATH (Linux), in order
    std::vector<fs::path> include_dirs; // first on CPATH (Linux), in order
    std::optional<fs::path> nvcc; // CUDACXX: nvcc in the first bin folder, when the toolkit has one
    std::optional<fs::path> cudnn_path; // CUDNN_PATH, CUDNN_ROOT: the cuDNN build's own folder
    std::optional<fs::path> cudnn_include_dir; // CUDNN_INCLUDE_DIR: where its cudnn.h is seen
    std::optional<fs::path> cudnn_lib_dir;     // CUDNN_LIB_DIR: where libcudnn is linked from
    std::optional<fs::path> nccl_path;         // NCCL_HOME, NCCL_ROOT: the NCCL build's own folder
    std::optional<fs::path> nccl_include_dir;  // NCCL_INCLUDE_DIR: where its nccl.h is seen
    std::optional<fs::path> nccl_lib_dir;      // NCCL_LIB_DIR: where libnccl is linked from
    HostCompiler host_compiler;                // the kept choice: selection_layout (view.h) reads it
    std::string active;                        // CVM_ACTIVE
    Version toolkit_version;
};

// Computes the folders of `r` for `os`; `view` is the merged view's folder (see view.h), or
// empty when there is none. Looks for nvcc in the toolkit's bin folders (a stat each).
Layout layout_of(const Resolved& r, const fs::path& view, platform::Os os);

// Rules for recognising another CUDA toolkit's folders on PATH / LD_LIBRARY_PATH.
// Cheap on purpose (the shim computes it): no entry files are read. Imported toolkits outside
// the store are recognised by what their folders hold (nvcc, libcudart, libcudnn).
struct ForeignDirs {
    std::vector<fs::path> store_layers; // anything under a layer is cvm's...
    fs::path shims_dir;                 // ...except the shims folder, which stays
    bool probe_filesystem = true;       // look for nvcc / libcudart / libcudnn in other folders
};

// What the folders of a PATH-like variable hold, for recognising another toolkit's among them.
enum class DirKind { Programs, Libraries, Headers };

// The PATH-like variables an activation edits, in the order compute_environment lists them:
// PATH; on Linux LD_LIBRARY_PATH, LIBRARY_PATH (the linker's -l) and CPATH (the compilers'
// #include, after -I and before the system folders).
struct ListVariable {
    const char* name;
    DirKind kind;
};
const std::vector<ListVariable>& list_variables(platform::Os os);
// True for PATH, LD_LIBRARY_PATH, LIBRARY_PATH and CPATH (any OS's list).
bool is_list_variable(const std::string& name);

// Marks the host compiler cvm put into CUDAHOSTCXX / NVCC_CCBIN: a value there that differs
// from it is the user's own choice, which cvm keeps.
extern const char* const kHostCompilerMark;

// True when `dir` (an element of a list variable) belongs to a CUDA toolkit or cuDNN build.
// System folders (/usr/bin, /usr/lib, /usr/include, C:\Windows...) never count, whatever they hold.
bool is_foreign_cuda_dir(const std::string& dir, const ForeignDirs& rules, platform::Os os,
                         DirKind kind);
inline bool is_foreign_cuda_dir(const std::string& dir, const ForeignDirs& rules, platform::Os os,
                                bool library_dir) {
    return is_foreign_cuda_dir(dir, rules, os,
                               library_dir ? DirKind::Libraries : DirKind::Programs);
}

// True when `dir` is a folder the whole machine shares (/usr/bin, /bin, /usr/local/bin, /usr/lib,
// /usr/lib/x86_64-linux-gnu, C:\Windows, C:\Windows\System32...). cvm never adds, moves or
// removes such a folder on PATH or LD_LIBRARY_PATH, and never makes shims from one.
bool is_system_folder(const std::string& dir, platform::Os os);

// The fixed lists behind is_system_folder and is_foreign_cuda_dir, for code that writes the same
// rules in a shell's language (shell.cpp): Linux system folders (multiarch ones are matched by
// pattern besides), the libraries that mark a CUDA or cuDNN library folder, and the files that
// mark a CUDA or cuDNN folder on Windows' PATH, and the headers that mark a CUDA or cuDNN
// include folder.
const std::vector<const char*>& linux_system_dirs();
const std::vector<const char*>& linux_cuda_library_probes();
const std::vector<const char*>& windows_cuda_bin_probes();
const std::vector<const char*>& cuda_header_probes();

// True when `dir` is a prefix the whole machine shares (/, /usr, /usr/local, C:\Windows): never
// a value for CUDA_PATH or CUDA_HOME.
bool is_system_prefix(const std::string& dir, platform::Os os);

// How an activation places the selection's programs on PATH.
enum class PathOrder {
    SelectionFirst, // the selection's bin folders lead (cvm env, exec, scripts, modules, shims)
    AfterShims      // ...but after cvm's shims folder, where PATH has it (the prompt hook: a typed
                    // `cd X && nvcc` then reaches the shim, which follows the folder at once)
};

// The variable edits that activate `layout` in the environment `current` (the values before
// the activation). Every variable of list_variables() gets the layout's folders first and loses
// other toolkits' folders; system folders (is_system_folder) are never added, moved or removed.
// A layout whose cuda_path is a system prefix (a toolkit registered as /usr) unsets CUDA_PATH,
// CUDA_HOME and CUDA_PATH_Vx_y rather than pointing them at the whole system. CUDACXX names the
// selection's nvcc; CUDNN_PATH, CUDNN_ROOT, CUDNN_INCLUDE_DIR and CUDNN_LIB_DIR its cuDNN (unset
// without one); NCCL_HOME, NCCL_ROOT, NCCL_INCLUDE_DIR and NCCL_LIB_DIR its NCCL (only with
// one: a user's own are left alone otherwise). The host compiler goes to CUDAHOSTCXX (and
// NVCC_CCBIN for an nvcc that reads it) unless the user chose one (either set, and not by cvm:
// kHostCompilerMark). Order is stable: CUDA_PATH, CUDA_HOME, CUDA_PATH_Vx_y, CUDACXX, CUDNN_*,
// NCCL_*, the host compiler's, the lists, CVM_ACTIVE.
std::vector<EnvChange> compute_environment(const Layout& layout, const EnvLookup& current,
                                           const ForeignDirs& rules, platform::Os os,
                                           PathOrder order = PathOrder::SelectionFirst);
// The same with PATH and LD_LIBRARY_PATH given and nothing else set.
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
