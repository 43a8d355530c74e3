#pragma once
// Reading what a folder on disk holds: a CUDA toolkit, a cuDNN build, or both (cuDNN copied into
// a toolkit by hand). Used by `cvm import`, by installs (to cross-check archive names) and by
// `cvm doctor`.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// A folder, and something that exists and is not a folder (links followed; errors are "no").
bool is_dir(const fs::path& p);
bool is_file(const fs::path& p);
// What `dir` holds, sorted (so imports are the same on every file system); empty when it cannot
// be read.
std::vector<fs::path> sorted_children(const fs::path& dir);
// The Debian multiarch folders of a lib folder: lib/x86_64-linux-gnu, lib/aarch64-linux-gnu.
std::vector<fs::path> multiarch_dirs(const fs::path& lib);

// --- readers of single facts (text in, value out; each tested on its own) ---

// version.json: {"cuda": {"version": "11.2.2"}, "cuda_cudart": {"version": "11.2.152"}, ...}
std::optional<Version> toolkit_version_from_version_json(std::string_view json);
std::optional<Version> component_version_from_version_json(std::string_view json,
                                                           const std::string& component);
// version.txt: "CUDA Version 11.0.228"
std::optional<Version> toolkit_version_from_version_txt(std::string_view text);
// cuda.h: "#define CUDA_VERSION 11020" -> 11.2
std::optional<Version> toolkit_version_from_cuda_h(std::string_view text);
// `nvcc --version`: "release 11.2, V11.2.152" -> 11.2.152
std::optional<Version> nvcc_version_from_output(std::string_view text);
// cudnn_version.h (8, 9) or cudnn.h (7): CUDNN_MAJOR/MINOR/PATCHLEVEL -> 8.1.0
std::optional<Version> cudnn_version_from_header(std::string_view text);

// dpkg's status file (/var/lib/dpkg/status): the packages installed ("Status: ... installed"),
// each with its version as written ("9.14.0.64-1", "2.28.3-1+cuda13.0").
struct DpkgPackage {
    std::string name;
    std::string version;
    std::string source;       // the source package it was built from ("nvidia-cuda-toolkit"); its name when unsaid
    std::string architecture; // "amd64", "all"
};
std::vector<DpkgPackage> installed_dpkg_packages(std::string_view status_text);

// The CUDA a conda package's conda-meta/<name>.json depends on: "cuda-version >=12,<13.0a0",
// older "cudatoolkit >=11.2,<12" give 12 and 11.2.
std::optional<Version> conda_meta_cuda(std::string_view json_text);

// What an archive-style or wheel-style name says about a cuDNN build.
struct CudnnNameInfo {
    Version version;             // 3 or 4 numbers
    std::optional<Version> cuda; // the CUDA it was built for, when the name says
    std::string platform;        // "linux-x86_64", "windows-x86_64", "" when unknown
};
// "cudnn-11.2-windows-x64-v8.1.0.77", "cudnn-linux-x86_64-8.9.7.29_cuda12-archive",
// "nvidia_cudnn_cu12-9.1.0.70" (dist-info or wheel stem). Extensions are ignored.
std::optional<CudnnNameInfo> cudnn_info_from_name(std::string_view name);

// --- folder detection ---

struct ToolkitFacts {
    std::optional<Version> release;      // from version.json / version.txt (3 numbers)
    std::optional<Version> cuda_h;       // major.minor from include/cuda.h
    std::optional<Version> nvcc;         // from nvcc --version
    std::optional<Version> cudart;       // cudart component (version.json or dist-info)
    std::string evidence;                // which file gave the release
    std::vector<std::string> include_dirs, lib_dirs, bin_dirs;
};

struct CudnnFacts {
    Version version;                     // 3 numbers from the header, 4 when a name adds the build
    std::optional<Version> cuda;         // variant, when known
    std::string evidence;
    std::vector<std::string> include_dirs, lib_dirs, bin_dirs;
};

struct FolderFacts {
    std::optional<ToolkitFacts> toolkit;
    std::optional<CudnnFacts> cudnn;
};

// Looks at `dir` (and for a wheel's nvidia/cudnn, the dist-info beside it). `run_nvcc` allows
// running bin/nvcc --version as a last resort.
FolderFacts detect_folder(const fs::path& dir, platform::Os os = platform::host_os(),
                          bool run_nvcc = true);

} // namespace cvm
