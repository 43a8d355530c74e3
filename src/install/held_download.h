#pragma once
// Downloads held to a sum decided before they start: the SHA-256 (and size) a public source gives
// (cvm's registry), else the one recorded when the archive was first downloaded (first_use.h),
// else the one a project's cvm.lock pins; with none of them, the first download is trusted and
// its sum recorded once the install succeeded. Used for legacy cuDNN archives and for NVIDIA's
// CUDA installers, which no manifest describes.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "install/download.h"
#include "install/first_use.h"

namespace cvm::install {

class Progress;

struct HeldSum {
    std::string sha256; // empty: none yet (trusted on first use)
    std::uint64_t size = 0;
    std::string from;   // "the SHA-256 in cvm's registry (from ...)", "the SHA-256 trusted on first use ..."
    std::string remedy; // what to do when a download differs
    bool first_use = false;                // no public sum: this download is (or was) trusted on first use
    std::optional<FirstUseRecord> record;  // the first-use record it is held to, if any
};

// The sum `name` is held to. `registry_sha256`/`registry_size`/`registry_source`: what cvm's
// registry gives (empty sum: nothing); `pinned`: the lock's. Throws InstallError (checksum) when
// the lock and the registry or record disagree.
HeldSum held_sum_for(const std::string& name, const std::string& registry_sha256, std::uint64_t registry_size,
                     const std::string& registry_source, const std::filesystem::path& record_file,
                     const std::optional<std::string>& pinned);

// The file of `url` (a folder mirror's own file, else downloaded into `cache_dir`), checked
// against `want`. Throws InstallError naming the archive, where its sum came from and what to do.
std::filesystem::path fetch_held(const std::string& name, const std::string& url, const HeldSum& want,
                                 const std::filesystem::path& cache_dir, const DownloadOptions& options);

// After a successful install of a first-use archive: records `sha256` (and the file's size) in
// `record_file`. Returns the message to show; `undo(message)` is called (and must throw) when a
// record made meanwhile by another cvm disagrees.
std::string record_held_first_use(const std::string& name, const std::string& url, const std::string& sha256,
                                  const std::filesystem::path& file, const std::filesystem::path& record_file,
                                  const std::filesystem::path& locks_dir,
                                  const std::function<void(const std::string&)>& undo);

} // namespace cvm::install
