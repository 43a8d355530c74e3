#pragma once
// Environment modules (Lmod's Lua and the Tcl format of Environment Modules, which Lmod also
// reads) for the toolkits and cuDNN builds of a store: `cvm export lmod|tcl DIR`.
//
//   DIR/cuda/<toolkit id>[.lua]    family cuda; the environment of the toolkit alone
//   DIR/cudnn/<cudnn id>[.lua]     family cudnn; needs a cuda module its CUDA variant serves
//   DIR/nccl/<nccl id>[.lua]       family nccl; needs a cuda module of its CUDA major; sets
//                                  NCCL_HOME and NCCL_ROOT and puts its lib first on
//                                  LD_LIBRARY_PATH (CUDA_PATH stays the loaded toolkit's)
//
// What a module sets comes from compute_environment (the function `cvm env`, `cvm exec` and the
// shims use), evaluated with empty PATH and LD_LIBRARY_PATH: the module prepends exactly the
// folders `cvm env` puts first and pushes the same values for the other variables. Removing
// other toolkits' folders and unsetting CUDNN_PATH are left to the module system: its families
// keep one cuda and one cudnn module loaded, and unloading pops every value it pushed.
//
// A cuDNN module holds one branch per compatible toolkit (newest first): at load time it uses
// the branch of the loaded cuda module, or loads the newest compatible one (depends_on), so
// CUDA_PATH always names the merged view of the toolkit that is really loaded.
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "activation/environment.h"
#include "modules/module_driver.h"
#include "store/resolve.h"
#include "store/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

enum class ModuleFormat { Lua, Tcl };

// What loading a module does for one toolkit: values pushed (restored on unload) and folders
// prepended (removed on unload), each in the order `cvm env` gives them.
struct ModuleActions {
    std::string toolkit_id; // cudnn modules: the cuda module this branch belongs to
    std::vector<std::pair<std::string, std::string>> set;                  // name, value
    std::vector<std::pair<std::string, std::vector<std::string>>> prepend; // name, folders
};

struct ModuleFile {
    Kind kind = Kind::Cuda;
    std::string id;        // "11.2.2" / "8.1.0.77-cuda11.2"
    std::string version;   // "11.2.2" / "8.1.0.77"
    std::string built_for; // cudnn, nccl: "11.2" / "12" / "12.4"
    std::string help;      // several lines
    std::vector<std::string> whatis;
    // cuda: exactly one; cudnn: one per compatible toolkit, newest first (never empty).
    std::vector<ModuleActions> branches;
    // cuda: the driver floors the module checks when loaded (module_driver.h); none when empty.
    ModuleDriverFloors driver;

    std::string name() const { return std::string(kind_dir(kind)) + "/" + id; }
};

// Turns compute_environment's edits (computed with no current PATH / LD_LIBRARY_PATH) into
// module actions. Unsets are dropped (see above).
ModuleActions module_actions_of(const std::vector<EnvChange>& changes, platform::Os os);

// The module of a toolkit, computed with layout_of + compute_environment.
ModuleFile toolkit_module(const Store& store, const Entry& toolkit, platform::Os os);

// The module of an NCCL build for the given compatible toolkits (newest first): the same actions
// in each branch, so the cuda module loaded decides nothing but whether it may load.
ModuleFile nccl_module(const Store& store, const Entry& nccl, const std::vector<Entry>& toolkits,
                       platform::Os os);

// The module of a cuDNN build for the given compatible toolkits (newest first). `view_for`
// returns the merged view of a combination (ensure_view in production).
ModuleFile cudnn_module(const Store& store, const Entry& cudnn, const std::vector<Entry>& toolkits,
                        const std::function<fs::path(const Resolved&)>& view_for, platform::Os os);

// The modulefile's text.
std::string render_module(const ModuleFile& m, ModuleFormat format);

// Relative file name in the export folder: "cuda/11.2.2.lua" or "cuda/11.2.2".
fs::path module_file_name(const ModuleFile& m, ModuleFormat format);

// The marker in the first lines of every file cvm writes (so a new export can remove the
// modules of toolchains that are gone without touching anyone else's files).
extern const char* const kModuleMarker;

struct ExportResult {
    std::vector<fs::path> written;    // absolute
    std::vector<fs::path> removed;    // stale files from an earlier export
    std::vector<std::string> skipped; // "cudnn 8.1.0.77-cuda11.2: why"
};

// Writes the modules of every toolkit and cuDNN build of `store` (all layers) into `dir`,
// making the merged views they name (in the writable layer). Files are replaced atomically.
// `driver_floors` (Linux modules) gives each toolkit's driver floors for its load-time check.
ExportResult export_modules(const Store& store, const fs::path& dir, ModuleFormat format,
                            platform::Os os = platform::host_os(),
                            const std::function<ModuleDriverFloors(const Entry&)>& driver_floors = {});

} // namespace cvm
