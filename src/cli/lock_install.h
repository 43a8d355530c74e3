#pragma once
// `cvm install --locked`, for install.cpp: install's install_locked (install/locked_install.h)
// run in this folder, its notes printed, and a note when the selection here is not the lock's.
#include <vector>

#include "store/store.h"
#include "install/store_install.h"
#include "registry/registry.h"

namespace cvm::cli {

// Throws install::InstallError (install.cpp maps it to UsageError or Failure). Returns what it
// installed (already_installed set for what was there).
std::vector<install::InstallResult> install_locked(install::StoreInstaller& installer,
                                                   const Store& store,
                                                   const registry::Registry* reg,
                                                   bool allow_lock_urls);

} // namespace cvm::cli
