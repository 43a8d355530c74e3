#pragma once
// The lock of one version in the store (<locks>/<kind>-<id>.lock), held from the decision to
// install until the entry is in place: two installs of the same thing end with one copy.
#include "store/store.h"
#include "platform/platform.h"

#include <memory>
#include <string>

namespace cvm::install {

class Progress;

// Waits for the lock (saying so through `progress` when another install holds it).
std::unique_ptr<platform::FileLock> lock_version(const Store& store, Kind kind, const std::string& id,
                                                 Progress* progress);

} // namespace cvm::install
