#pragma once
// `cvm install --locked`, for install.cpp: installs exactly what the project's cvm.lock records.
#include <vector>

#include "core/store.h"

#ifdef CVM_HAVE_INSTALL
#include "install/installer.h"

namespace cvm::cli {

// Reads the cvm.lock beside the nearest .cudaversion and makes the store hold exactly that:
// - a locked toolchain already in the store must match it (id, platform, components, archive
//   SHA-256 sums); any difference is refused before anything is installed;
// - a missing one is installed from its manifest (toolkits: the locked components; cuDNN: the
//   locked build) or its locked archive URL (through CVM_MIRROR), then compared again and
//   removed if the mirror served anything else than what is locked;
// - a locked import (no known archive) must already be imported here.
// Throws UsageError (no or malformed cvm.lock, wrong platform) or Failure (differences).
// Returns what it installed (already_installed set for what was there), for rehash and JSON.
std::vector<install::InstallResult> install_locked(install::Installer& installer,
                                                   const Store& store);

} // namespace cvm::cli
#endif
