#pragma once
// The real version of every cuDNN library file, never only from its name, and the check that a
// set of them (the main library and the sub-libraries it loads) is one release from one folder.
// Evidence, strongest first:
//   - the read-only data symbol cuDNN 9's sub-libraries (and 8's) export with their version:
//     cudnn_ops_infer_version, cudnn_graph_version, cudnn_adv_infer_version... (0x091300 = 9.19.0)
//   - the owner's record, the file's hash checked (cudnn_owners.h): a wheel's RECORD, dpkg's
//     package (version from status), cvm's per-file record; or an owner's file it is a copy of
//   - a full version in the real file name (libcudnn.so.8.1.0) or a DLL's version resource
//   - cudnn_version.h beside the library folder (../include), which names the folder's release
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compat/cudnn_owners.h"
#include "spec/spec.h"

namespace cvm::compat {

struct CudnnFileVersion {
    std::string path;      // as given
    std::string real_path; // links followed
    std::string folder;    // of real_path
    std::optional<Version> version;
    std::string evidence;  // "symbol cudnn_ops_infer_version", "dpkg libcudnn9-cuda-12", "wheel nvidia_cudnn_cu12"
    // The owner whose record lists this file with these bytes, or whose file this is a copy of.
    std::optional<FileOwner> owner;
    // The owner whose record lists this file with other bytes: it was replaced.
    std::optional<FileOwner> replaced;
    bool is_main() const; // libcudnn.so.N / cudnn64_N.dll
};

using CudnnEvidenceRoots = OwnerRoots;

// The file's release from its strongest evidence. The owner is looked up (and the file hashed)
// only when no version symbol answers, unless `with_owner`.
CudnnFileVersion cudnn_file_version(const std::string& path, const CudnnEvidenceRoots& roots = {},
                                    bool with_owner = false);

struct CudnnSetCheck {
    std::vector<CudnnFileVersion> files;
    bool mixed_versions = false; // two files of known, different major.minor.patch
    bool mixed_folders = false;  // the files lie in more than one folder
    bool altered = false;        // a file is not what its owner installed
    std::optional<Version> release; // the set's release: the main library's, else the most files'
    // "libcudnn.so.9 9.19.0 (symbol ...) in /a; libcudnn_engines_precompiled.so.9 9.14.0 (dpkg ...) in /b"
    std::string listing() const;
    // What makes the set one release again, naming the owners to reinstall, upgrade or remove
    // (never a system folder), and `cvm use CUDA+CUDNN`.
    std::string fix() const;
    bool problem() const { return mixed_versions || mixed_folders || altered; }
};

// Reads every file and compares them. Files that do not exist are left out.
CudnnSetCheck check_cudnn_set(const std::vector<std::string>& paths, const CudnnEvidenceRoots& roots = {});

} // namespace cvm::compat
