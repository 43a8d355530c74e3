#pragma once
// Where a CUDA toolkit's files are, in every layout `cvm import DIR` understands:
//   - a self-contained root (NVIDIA's installers and archives, /usr/local/cuda-X.Y);
//   - Debian/Ubuntu's nvidia-cuda-toolkit packages (and other /usr-style prefixes, RPM's lib64);
//   - conda environments (cuda-* packages: $PREFIX/bin, targets/<arch>/{include,lib}, Library\ on Windows);
//   - pip wheels (site-packages/nvidia/<component>/ for CUDA 12, nvidia/cu13/ for CUDA 13).
// A scattered toolkit gets an assembled root (assemble.h) of links that looks like a
// self-contained one, holding CUDA's own programs, headers and libraries only (picked out of
// shared folders by the name rules of toolkit_name_rules.h).
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/assemble.h"
#include "layouts/folder_facts.h"
#include "layouts/toolkit_name_rules.h"
#include "store/store.h"

namespace cvm {

// A toolkit's release id and which evidence gave it (for the entry's note).
struct ToolkitIdentity {
    std::optional<Version> version;
    std::string how;
};
// What the files alone say: version.json / version.txt (or a package record) when present,
// else include/cuda.h's major.minor with the cudart (or nvcc) build number.
ToolkitIdentity toolkit_identity_from_files(const ToolkitFacts& facts);
// The CLI passes one that also asks the release registry (which layouts cannot link).
using IdentifyToolkit = std::function<ToolkitIdentity(const ToolkitFacts&)>;

struct ToolkitImport {
    Entry entry;                 // for an assembled root: path == origin == where the files are
    std::vector<RootLink> plan;  // empty for a self-contained root
};

// nullopt when `dir` holds no toolkit; throws std::runtime_error naming the folder and what is
// missing when it sees one it cannot read (no version to be found).
std::optional<ToolkitImport> toolkit_import_of(const fs::path& dir, platform::Os os,
                                               const IdentifyToolkit& identify = toolkit_identity_from_files);

} // namespace cvm
