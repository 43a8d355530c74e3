#pragma once
// `cvm install --locked`, for install.cpp: installs exactly what the project's cvm.lock records.
#include <vector>

#include "store/store.h"
#include "install/store_install.h"
#include "registry/registry.h"

namespace cvm::cli {

// Reads the cvm.lock beside the nearest .cudaversion and makes the store hold exactly that:
// - a locked toolchain already in the store must match it (id, platform, components, archive
//   SHA-256 sums); any difference is refused before anything is installed;
// - a missing one is installed from its manifest (toolkits: the locked components; cuDNN: the
//   locked build) or its locked archive URL (through CVM_MIRROR), then compared again and
//   removed if the mirror served anything else than what is locked;
// - a locked import (no known archive) must already be imported here;
// - what is to be downloaded must be a release `reg` knows, from NVIDIA's site or the configured
//   mirror (install/lock_sources.h), unless `allow_lock_urls`. Sums are compared with NVIDIA's
//   manifests.
// Throws UsageError (no or malformed cvm.lock, wrong platform, untrusted source) or Failure
// (differences). Returns what it installed (already_installed set for what was there).
std::vector<install::InstallResult> install_locked(install::StoreInstaller& installer,
                                                   const Store& store,
                                                   const registry::Registry* reg,
                                                   bool allow_lock_urls);

} // namespace cvm::cli
