#pragma once
// What `cvm doctor` looks at (DoctorInputs: a snapshot of the machine) and what it finds
// (DoctorReport: the libraries that load and the findings). Below the checks that fill a report
// (selection_checks.h, library_checks.h, ...) and diagnose.h, which runs them in order.

#include "binary/elf_reader.h"
#include "binary/ld_cache.h"
#include "driver.h"
#include "file_system_view.h"
#include "finding.h"
#include "python_env.h"

#include "activation/environment.h"
#include "project/selection.h"
#include "store/resolve.h"
#include "platform/platform.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cvm::registry {
struct Registry;
}

namespace cvm::doctor {

struct CandidateRow {
    std::string path;
    std::string mechanism; // "LD_LIBRARY_PATH", "PATH", "System32", ...
    std::string status;    // "selected", "shadowed", "not found", ...
    std::string detail;
};

// Where one library comes from in one scenario.
struct LibraryLoad {
    std::string scenario; // "current" (this shell) or "selected" (through cvm: shims, cvm exec)
    std::string family;   // "cudnn", "cudart", "cublas"
    std::string role;     // "cudnn", "cudnn_ops_infer", "cudart", "cublas", ...
    std::string name;     // the file name searched
    bool main = false;    // a library programs link (sub-libraries are loaded by cuDNN)
    std::optional<std::string> path;      // the file that loads
    std::optional<std::string> real_path; // after symbolic links
    std::string mechanism;                // how it was found
    std::string origin;                   // which entry found it
    std::optional<std::string> version;   // from the real file name or the DLL's version
    std::optional<std::string> failure;   // the load stops with an error at this file
    std::optional<bool> from_selection;   // inside the selected toolkit / cuDNN / view
    std::vector<std::string> shadowed;    // loadable copies that lose
    std::vector<CandidateRow> candidates; // the whole search, in order
};

struct WindowsFolders {
    std::string windows_dir; // C:\Windows
    std::string system32_dir;
    std::string system16_dir;
};

struct DoctorInputs {
    platform::Os os = platform::host_os();
    std::map<std::string, std::string> env; // this process's environment
    std::string cwd;

    Selection selection; // origin None: nothing selected
    std::optional<Resolved> resolved;
    std::string resolve_error;               // set when a selection names nothing installed
    std::vector<EnvChange> selected_changes; // what cvm sets for the selection
    std::vector<std::string> selection_dirs; // toolkit, cuDNN and merged-view folders
    std::vector<std::string> store_layers;   // Store::layers(), to name where an entry lives

    const registry::Registry* registry = nullptr; // nullptr: no registry checks
    DriverInfo driver;
    std::optional<PythonInfo> python;
    std::string python_failure; // why the Python that would run said nothing (inspect_python's why)

    // Linux loader emulation.
    const binary::LdCache* ld_cache = nullptr;
    std::string ld_cache_path = "/etc/ld.so.cache";
    std::vector<std::string> linux_default_dirs;
    std::optional<binary::ElfInfo> linux_abi;
    // Windows loader emulation.
    WindowsFolders windows;

    const FileSystemView* fs = nullptr;
};

struct DoctorReport {
    platform::Os os = platform::host_os();
    std::string selection_spec;   // "" when nothing is selected
    std::string selection_origin; // Selection::origin_text()
    std::optional<Resolved> resolved;
    std::vector<std::string> store_layers; // as DoctorInputs
    DriverInfo driver;
    std::optional<PythonInfo> python;
    std::vector<LibraryLoad> libraries;
    std::vector<Finding> findings;

    bool healthy() const; // no error and no warning
};

} // namespace cvm::doctor
