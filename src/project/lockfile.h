#pragma once
// cvm.lock: a project's exact toolchain, written by `cvm lock` beside its .cudaversion and
// reproduced by `cvm install --locked`.
//
//   # comments
//   lock_version = 1
//   spec = "11.2+8.1"                      # the .cudaversion spec it was resolved from
//   active = "11.2.2+8.1.0.77-cuda11.2"
//
//   [cuda]
//   id = "11.2.2"
//   source = "installed"                   # or "imported"
//   platform = "linux-x86_64"
//   components = ["cuda_cudart", "cuda_nvcc"]
//
//   [[cuda.archive]]
//   name = "cuda_nvcc"
//   url = "https://developer.download.nvidia.com/compute/cuda/redist/..."
//   sha256 = "<64 hex digits>"
//   trust = "first-use"                    # only where no public source gives the sum
//
//   [cudnn]                                # absent without cuDNN
//   id = "8.1.0.77-cuda11.2"
//   source = "imported"                    # no archive: it was registered from a folder
//
//   [nccl]                                 # absent without NCCL; as [cudnn]
//   id = "2.21.5-cuda12.4"
//
// The file is TOML: cvm writes it itself (with comments) and reads it with toml++; a value of
// the wrong kind, or malformed TOML, is refused with the file and line.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "store/resolve.h"

namespace cvm {

namespace fs = std::filesystem;

constexpr int kLockVersion = 1;
constexpr const char* kLockFileName = "cvm.lock";

struct LockedArchive {
    std::string name;   // component or file name
    std::string url;    // "" when unknown (installed from a local file without a source URL)
    std::string sha256; // lower-case hex, 64 digits
    bool first_use = false; // trust = "first-use": no public source gives the sum
};

struct LockedToolchain {
    Kind kind = Kind::Cuda;
    std::string id;                      // "11.2.2" / "8.1.0.77-cuda11.2"
    bool imported = false;               // registered from a folder: no archive to fetch
    std::string platform;                // "linux-x86_64"; "" when the entry did not say
    std::vector<std::string> components; // as installed (sorted)
    std::vector<LockedArchive> archives; // sorted by name
    // A toolkit registered under a name (import --as): its release, written as `version`; a
    // toolkit id says its own.
    Version release;

    // True when the lock can fetch and verify it: installed, with every archive's URL and sum.
    bool reproducible() const;
};

struct Lockfile {
    int lock_version = kLockVersion;
    std::string spec; // the spec the project selects
    LockedToolchain cuda;
    std::optional<LockedToolchain> cudnn;
    std::optional<LockedToolchain> nccl;

    std::string active() const; // "11.2.2+8.1.0.77-cuda11.2", "12.4.1+nccl2.21.5-cuda12.4"
    // Every toolchain the lock records, in all_kinds() order.
    std::vector<const LockedToolchain*> toolchains() const;
};

// Thrown for an unreadable or malformed lock file; the message names the file and line and
// says what to do.
class LockfileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What a lock records as an archive's source: an http(s) URL as it is; a folder mirror's
// file:// URL of the redist shape as the same path on NVIDIA's site; "" for anything else (a
// local file or path, which would mean nothing on another machine).
std::string lockable_source(const std::string& url);

// The lock of a resolved combination. `spec` is the project's spec text.
Lockfile lockfile_of(const Resolved& r, const std::string& spec);
LockedToolchain locked_toolchain_of(const Entry& e);

// TOML text (deterministic: same lock, same bytes).
std::string format_lockfile(const Lockfile& lock);
// Parses and validates; `origin` (the file name) prefixes error messages. Throws LockfileError.
Lockfile parse_lockfile(std::string_view text, const std::string& origin);

Lockfile read_lockfile(const fs::path& file);
// Writes atomically (temp file + rename beside it).
void write_lockfile(const fs::path& file, const Lockfile& lock);

// cvm.lock beside a .cudaversion file.
fs::path lockfile_path_for(const fs::path& version_file);
// The cvm.lock beside the nearest .cudaversion from `cwd` upward (whether or not it exists);
// nullopt when no .cudaversion is found.
std::optional<fs::path> find_lockfile(const fs::path& cwd);

// How an installed entry differs from what the lock records: one line per difference, empty
// when it is exactly the locked toolchain. Archives are compared by name and SHA-256 (URLs
// may differ: mirrors); a locked import can only be compared by id and platform.
std::vector<std::string> lock_differences(const LockedToolchain& locked, const Entry& installed);

// A locked URL fetched through CVM_MIRROR: a URL of the shape <base>/<product>/redist/<path> or
// <base>/redist/cudnn/<path> (NVIDIA's site, or the mirror it was installed from) gets `mirror`
// as its base; other URLs,
// and any URL when `mirror` is empty, stay as they are. The SHA-256 decides either way.
std::string mirrored_url(const std::string& url, const std::optional<std::string>& mirror);

} // namespace cvm
