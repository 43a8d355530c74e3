#pragma once
// Where a scattered toolkit's files are, layout by layout (a shared prefix such as /usr or
// /usr/local, Debian's nvidia-cuda-toolkit, a conda environment, pip wheels), with the versions
// the layout's own records give. Inside src/layouts: toolkit_layouts assembles a root from them.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "layouts/folder_facts.h"
#include "platform/platform.h"
#include "spec/spec.h"

namespace cvm {

// Where a scattered toolkit's files are. Each list is searched in order; the first file of a
// name wins.
struct ToolkitSources {
    std::string layout; // for the note and errors
    fs::path origin;
    std::vector<fs::path> bins;                      // CUDA programs are picked out
    std::vector<std::pair<fs::path, bool>> includes; // (folder, shared with other packages)
    std::vector<fs::path> libs;                      // CUDA libraries are picked out
    std::vector<fs::path> nvvm_dirs;                 // a whole nvvm/ folder, when there is one
    fs::path libdevice, cicc;                        // otherwise its parts
    std::string target = "x86_64-linux";             // targets/<target> for relative nvcc.profiles
    ToolkitFacts facts;                              // versions the layout's records gave
    std::vector<std::string> components;
    std::vector<fs::path> own_dirs; // folders that are the toolkit's alone (wheels'): linked whole
    // Files its packages' own records say are the toolkit's (dpkg's lists), for what the name
    // rules miss in shared folders; placed by the folder they are in (`placed_dirs`).
    std::vector<fs::path> owned;
    std::vector<std::pair<fs::path, std::string>> placed_dirs; // (folder, its place in the root)
};

// Whether a bin folder belongs to more than the toolkit (/usr/bin, a conda environment's bin).
bool is_shared_bin(const fs::path& bin, platform::Os os);

// The cudart version in the name of a libcudart.so.X.Y.Z of `libs`, searched in order.
std::optional<Version> cudart_from_file_names(const std::vector<fs::path>& libs);

// A prefix with CUDA among other packages: /usr (Debian, Ubuntu, RPM's lib64), a conda
// environment, /usr/local.
ToolkitSources prefix_sources(const fs::path& prefix, platform::Os os);

// Debian/Ubuntu's nvidia-cuda-toolkit: the real nvcc in <prefix>/lib/nvidia-cuda-toolkit/bin,
// its other programs in <prefix>/bin. `dir` may be the prefix, that folder, or <prefix>/lib/cuda.
std::optional<fs::path> debian_prefix(const fs::path& dir);
// Its files, with the release dpkg records and the files its packages' lists name.
ToolkitSources debian_sources(const fs::path& prefix);

// A conda environment's cuda-* packages, with the versions conda-meta records.
ToolkitSources conda_sources(const fs::path& prefix, platform::Os os);

// site-packages/nvidia/ of pip wheels; `dir` may be site-packages or its nvidia/. nullopt when
// it holds no toolkit wheel; throws std::runtime_error for a wheel pip left half-installed.
std::optional<ToolkitSources> wheel_sources(const fs::path& dir);

} // namespace cvm
