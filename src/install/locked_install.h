#pragma once
// `cvm install --locked`: makes the store hold exactly what the project's cvm.lock records, or
// nothing more than it held.
#include <functional>
#include <string>
#include <vector>

#include "store/store.h"
#include "install/store_install.h"
#include "registry/registry.h"

namespace cvm::install {

struct LockedInstall {
    std::vector<InstallResult> results; // what it installed (already_installed for what was there)
    std::string active;                 // the combination the lock records (Lockfile::active())
};

// Reads the cvm.lock beside the nearest .cudaversion from `cwd` and makes the store hold exactly
// that:
// - a locked toolchain already in the store must match it (id, platform, components, archive
//   SHA-256 sums); any difference is refused before anything is installed;
// - a missing one is installed from its manifest (toolkits: the locked components; cuDNN: the
//   locked build) or its locked archive URL (through CVM_MIRROR), then compared again and
//   removed if the mirror served anything else than what is locked;
// - a locked import (no known archive) must already be imported here;
// - what is to be downloaded must be a release `reg` knows, from NVIDIA's site or the configured
//   mirror (lock_sources.h), unless `allow_lock_urls`. Sums are compared with NVIDIA's manifests.
// `note` says each difference, untrusted source and entry taken back, as they are found. Throws
// InstallError: input (exit code 2: no or malformed cvm.lock, wrong platform, untrusted source)
// or operation (1: differences).
LockedInstall install_locked(StoreInstaller& installer, const Store& store,
                             const registry::Registry* reg, bool allow_lock_urls,
                             const std::filesystem::path& cwd,
                             const std::function<void(const std::string&)>& note);

} // namespace cvm::install
