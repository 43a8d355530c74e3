#pragma once
// `cvm install --reinstall ID`: which source an installed entry is installed again from, decided
// from what its entry recorded; the store's one writer then replaces it (Store::commit_entry).
#include <string>

#include "store/store.h"
#include "install/store_install.h"

namespace cvm::install {

// From the archive it was installed from (checked against the sum recorded then), else from
// NVIDIA's public folder or manifests; the old entry stays until the new one is whole. `installer`
// is made with StoreInstallerOptions::reinstall. Throws InstallError: input (exit code 2) for an
// id that is not installed, not an id or an import; operation (1) for an archive gone or changed.
InstallResult reinstall(StoreInstaller& installer, const Store& store, const std::string& id);

} // namespace cvm::install
