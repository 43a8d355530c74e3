#pragma once
// The release registry as commands use it: the data shipped with cvm plus the overlay `cvm update`
// keeps in $CVM_ROOT/cache (registry/overlay.h), and a line saying how current it is.
#include <string>

#include "store/store.h"
#include "registry/overlay.h"
#include "registry/registry.h"

namespace cvm::cli {

// The shipped registry with the store's overlay merged in. A garbled or untrusted overlay is
// noted on stderr (once per process) and left out; the shipped registry's errors are thrown
// (RegistryError).
registry::Registry release_registry(const Store& store, registry::OverlayState* state = nullptr);

// "registry updated 3 days ago (2 releases newer than cvm's own list); `cvm update` refreshes it",
// or, without an overlay, "registry as shipped with cvm; `cvm update` looks for newer releases".
std::string registry_age_line(const registry::OverlayState& state);

} // namespace cvm::cli
