#pragma once
// The layouts a cuDNN is found in on a machine, and the store entry each becomes:
//  - a plain root (include/ with cudnn_version.h, lib/ or lib64/ or bin/): NVIDIA's redist
//    archives, cuDNN copied into a toolkit, a wheel's nvidia/cudnn;
//  - the same reached from above: a wheel's site-packages or its nvidia/ folder, an extracted
//    legacy archive's parent (cudnn-11.2-windows-x64-v8.1.0.77/cuda/...);
//  - NVIDIA's system packages (apt: libraries in /usr/lib/<multiarch>, headers versioned as
//    /usr/include/<multiarch>/cudnn_v9.h; RPM: /usr/lib64, /usr/include), which get an assembled
//    root of links (assemble.h) so no shared system folder becomes CUDNN_PATH or lands on
//    LD_LIBRARY_PATH.
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "store/assemble.h"
#include "spec/spec.h"
#include "store/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// The folder holds a cuDNN whose identity cannot be told; what() is one line naming the folder,
// what is missing and what to run.
class CudnnImportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
// --cuda names another CUDA major than the one the cuDNN's libraries load.
class CudnnCudaConflict : public CudnnImportError {
public:
    using CudnnImportError::CudnnImportError;
};

struct CudnnImport {
    Entry entry;                // kind, id, version, cuda, path or origin, dirs, note, stamp
    std::vector<RootLink> plan; // empty when the folder is a plain cuDNN root
    std::string warning;        // e.g. sub-libraries of another release; also in entry.note
};

// Builds since cuDNN 8.3 are made per CUDA major, older ones per CUDA minor.
bool built_per_major(const Version& cudnn);
// The variant (the CUDA in its id) of a build of `cudnn` for `cuda`: 12 for 9.1.0 and CUDA 12.4,
// 11.2 for 8.1.0.77 and CUDA 11.2.
Version cudnn_variant_for(const Version& cudnn, const Version& cuda);

// What the registry knows of a cuDNN release (layouts cannot read the registry, which is above it).
struct KnownCudnnRelease {
    Version version;                  // 4 numbers
    std::vector<Version> cuda_variants;
};
// Releases whose version starts with the given 3 numbers.
using CudnnReleaseLookup = std::function<std::vector<KnownCudnnRelease>(const Version&)>;

// The cuDNN `dir` holds, in any layout above; nullopt when it holds none. `cuda_override` is
// --cuda; `toolkit_version_in_same_folder` the toolkit found in `dir` (cuDNN copied into it is
// built for its CUDA). `lookup` fills in a legacy archive's build number and CUDA variant when
// its folder name does not say. When nothing of the layout says the CUDA, its major comes from
// the CUDA libraries cuDNN's libraries name (cudnn_cuda_major.h). Throws CudnnImportError when
// the CUDA variant cannot be told, CudnnCudaConflict when `cuda_override` contradicts the
// libraries.
std::optional<CudnnImport> cudnn_import_of(const fs::path& dir, platform::Os os,
                                           const std::optional<Version>& cuda_override,
                                           const std::optional<Version>& toolkit_version_in_same_folder,
                                           const CudnnReleaseLookup& lookup = {});

// An installed cuDNN package from dpkg's status file.
struct DpkgCudnn {
    std::string package; // "libcudnn9-cuda-13", "libcudnn8"
    Version version;     // 4 numbers: 9.14.0.64
    Version cuda;        // the build's variant: 13, or 12 for "8.9.7.29-1+cuda12.2"
};
// "Package: libcudnn9-cuda-13 ... Status: install ok installed ... Version: 9.14.0.64-1".
std::vector<DpkgCudnn> cudnn_packages_from_dpkg_status(std::string_view text);

// Whether `dir` holds cuDNN libraries of NVIDIA's system packages (a multiarch lib folder, or
// lib64 of a folder named usr), for discovery.
bool has_system_cudnn(const fs::path& dir);

} // namespace cvm
