#pragma once
// How a toolkit found on disk gets its release id (three numbers).
#include <optional>
#include <string>

#include "layouts/toolkit_layouts.h"

namespace cvm::cli {

// version.json / version.txt when present; otherwise the registry's release whose cudart or
// nvcc matches; otherwise include/cuda.h's major.minor with the cudart (or nvcc) build number.
ToolkitIdentity toolkit_identity(const ToolkitFacts& facts);

} // namespace cvm::cli
