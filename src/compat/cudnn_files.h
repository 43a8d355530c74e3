#pragma once
// The real version of every cuDNN library file, never only from its name, and the check that a
// set of them (the main library and the sub-libraries it loads) is one release from one folder.
// Evidence, strongest first:
//   - the read-only data symbol cuDNN 9's sub-libraries (and 8's) export with their version:
//     cudnn_ops_infer_version, cudnn_graph_version, cudnn_adv_infer_version... (0x091300 = 9.19.0)
//   - the owner's record: a wheel's RECORD listing the file (version from its .dist-info), dpkg's
//     package owning the file (info/<pkg>.list, version from status)
//   - a full version in the real file name (libcudnn.so.8.1.0) or a DLL's version resource
//   - cudnn_version.h beside the library folder (../include), which names the folder's release
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/spec.h"

namespace cvm::compat {

struct CudnnFileVersion {
    std::string path;      // as given
    std::string real_path; // links followed
    std::string folder;    // of real_path
    std::optional<Version> version;
    std::string evidence;  // "symbol cudnn_ops_infer_version", "dpkg libcudnn9-cuda-12", "wheel nvidia_cudnn_cu12"
};

struct CudnnEvidenceRoots {
    std::filesystem::path dpkg_dir = "/var/lib/dpkg"; // info/*.list and status
};

CudnnFileVersion cudnn_file_version(const std::string& path, const CudnnEvidenceRoots& roots = {});

struct CudnnSetCheck {
    std::vector<CudnnFileVersion> files;
    bool mixed_versions = false; // two files of known, different major.minor.patch
    bool mixed_folders = false;  // the files lie in more than one folder
    // "libcudnn.so.9 9.19.0 (symbol ...) in /a; libcudnn_engines_precompiled.so.9 9.14.0 (dpkg ...) in /b"
    std::string listing() const;
};

// Reads every file and compares them. Files that do not exist are left out.
CudnnSetCheck check_cudnn_set(const std::vector<std::string>& paths, const CudnnEvidenceRoots& roots = {});

} // namespace cvm::compat
