#pragma once
// Who owns a cuDNN file and which release that owner says it is, the file's bytes checked
// against the owner's own record: a wheel's RECORD (sha256, urlsafe base64), dpkg's md5sums, or
// cvm's per-file record of an installed entry (<entry dir>/files). A file that no owner lists
// may be a byte-for-byte copy of an owner's file (a folder assembled by hand): found by hash
// among the files of the same library name.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "spec/spec.h"

namespace cvm::compat {

struct FileOwner {
    enum class Kind { Wheel, Dpkg, Cvm } kind = Kind::Wheel;
    std::string name;         // "nvidia_cudnn_cu12", "libcudnn9-cuda-12", "9.19.0.56-cuda13" (a cvm ID)
    std::string version_text; // as the owner writes it: "9.19.0.56", "9.14.0.64-1"
    std::optional<Version> version; // its release numbers
    std::string owned_path;   // the file the owner's record names
    bool copy = false;        // the file examined is a copy of owned_path
    bool hash_checked = false; // the record's hash was compared with the file and matched

    // "wheel nvidia_cudnn_cu12", "dpkg libcudnn9-cuda-12", "cvm 9.19.0.56-cuda13".
    std::string who() const;
    // The name its installer takes: a wheel's distribution with '-' ("nvidia-cudnn-cu12").
    std::string installable_name() const;
    // who(), with ", a copy of PATH" for a copy.
    std::string describe() const;
    // What puts the owner's files back: "pip install --force-reinstall --no-deps
    // nvidia-cudnn-cu12==9.19.0.56", "apt-get install --reinstall libcudnn9-cuda-12",
    // "cvm install --reinstall ID".
    std::string reinstall() const;
};

struct OwnerRoots {
    std::filesystem::path dpkg_dir = "/var/lib/dpkg"; // info/*.list, *.md5sums and status
    // site-packages folders searched for a copy's original, besides the file's own.
    std::vector<std::filesystem::path> site_dirs;
};

// The roots of this machine: CVM_DPKG_DIR (tests) or /var/lib/dpkg; the site-packages of
// VIRTUAL_ENV and CONDA_PREFIX.
OwnerRoots machine_owner_roots();

struct OwnerLookup {
    std::optional<FileOwner> owner;    // lists the file, and its bytes are the ones it installed
    std::optional<FileOwner> replaced; // lists the file, but its bytes are not the ones it installed
};

// The owner whose record lists `real` (or the path it was found by, `given`).
OwnerLookup owner_of(const std::filesystem::path& real, const std::string& given, const OwnerRoots& roots);

// An owner's file of the same library whose bytes `real` has (its size, then its hash).
std::optional<FileOwner> copied_from(const std::filesystem::path& real, const OwnerRoots& roots);

} // namespace cvm::compat
