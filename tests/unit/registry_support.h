#pragma once
// The registry of the source tree (registry/), for the unit tests that check rules against its
// real facts.
#include "registry/registry.h"

namespace cvm::test {

// Loaded once per test program.
inline const registry::Registry& real_registry() {
    static const registry::Registry reg =
        registry::load_registry(registry::source_tree_registry_dir());
    return reg;
}

} // namespace cvm::test
