#pragma once
// The core of `cvm import DIR`, callable from other commands (`cvm use --for .` imports a
// framework's own cuDNN and NCCL wheels with it): a folder is read first (nothing registered
// when any half cannot be read), then registered.
#include <map>
#include <optional>
#include <set>
#include <string>

#include "cli/context.h"
#include "layouts/cudnn_layouts.h"
#include "layouts/nccl_layouts.h"
#include "store/store.h"
#include "layouts/toolkit_layouts.h"
#include <nlohmann/json.hpp>

namespace cvm::cli {

// How one run of `cvm import` registers: `found` says where --detect found the folder (for
// its messages); entries whose source changed are replaced; what was registered in this run is
// not reported twice (a wheel is reached from <site-packages>/nvidia and from nvidia/cudnn).
struct ImportRun {
    std::string found;
    fs::path folder; // the folder being imported, as given (for the lines that name a command)
    std::set<std::string> refresh; // "<kind>/<id>" of entries to re-read
    std::map<std::string, fs::path>
        registered; // "<kind>/<id>" registered or confirmed in this run -> its folder
    // For --json: {"kind", "id", "source", "status"} per entry, {"source", "reason"} per folder
    // passed over.
    nlohmann::json entries = nlohmann::json::array();
    nlohmann::json skipped = nlohmann::json::array();

    void record(const Entry& e, const fs::path& source, const char* status);
    void skip(const fs::path& source, const std::string& reason);
};

// A folder with neither a toolkit nor a cuDNN nor an NCCL (--detect passes over it with a short
// line).
class NothingToImport : public UsageError {
public:
    using UsageError::UsageError;
};

// What one folder holds, read and checked (a wheel against its RECORD), nothing registered yet.
struct FolderImport {
    std::optional<ToolkitImport> toolkit;
    std::optional<CudnnImport> cudnn;
    std::optional<NcclImport> nccl;
};

// Reads `path` as `cvm import` does. Throws UsageError (exit 2) with one line naming the folder
// and what to run when it cannot be read or holds nothing to import.
FolderImport read_import_folder(const fs::path& path, const std::optional<Version>& cuda_override);

// Registers what read_import_folder found (an entry already registered from the same folder is
// kept and recorded `already_registered`). Returns true when a toolkit was added.
bool register_folder(const Store& store, const FolderImport& found, ImportRun& run);

} // namespace cvm::cli
