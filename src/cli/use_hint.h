#pragma once
// The `cvm use` line shown after an install or an import: the spec that selects what was added,
// checked against the store first, so a hint never names a selection that cannot resolve (a
// cuDNN or NCCL for a CUDA major with no toolkit installed gets the install command instead).
#include <string>
#include <vector>

#include "store/store.h"

namespace cvm::cli {

// What was added, by kind and id ("cuda" 13.0.2, "cudnn" 9.28.1.4-cuda13, "nccl" 2.32.6-cuda13.5).
struct AddedEntry {
    Kind kind;
    std::string id;
};

// Prints the hint (nothing when nothing was added): `next: cvm use SPEC (selects it ...)`, or,
// when no installed toolkit can take the added builds, `next: cvm install M (no CUDA M toolkit is
// installed; then cvm use SPEC)`.
void use_hint(const Store& store, const std::vector<AddedEntry>& added);

} // namespace cvm::cli
