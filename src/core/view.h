#pragma once
// The merged view of a toolkit and a cuDNN build: a folder in $CVM_ROOT/views/ that looks like
// the toolkit with cuDNN copied into it (include/cudnn*.h, lib64/libcudnn*, bin/cudnn64_8.dll),
// made of links only, so neither install is touched.
#include <filesystem>

#include "core/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// Where the view of `r` lives (empty path when none is needed: no cuDNN, or a cuDNN that sits
// inside the toolkit's own folder).
fs::path view_path(const Store& store, const Resolved& r);

// Fills `folder` (created, or empty) with the view of `r`: what ensure_view makes, for `cvm
// verify` to compare with.
void build_view(const Resolved& r, const fs::path& folder, platform::Os os = platform::host_os());

// Creates the view when it is missing (staged, then renamed into place, so concurrent callers
// are safe) and returns its path, or the empty path when none is needed.
fs::path ensure_view(const Store& store, const Resolved& r, platform::Os os = platform::host_os());

} // namespace cvm
