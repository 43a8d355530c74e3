#pragma once
// The merged view of a toolkit with a cuDNN and/or an NCCL build: a folder in $CVM_ROOT/views/
// (named as the combination, Resolved::active) that looks like the toolkit with cuDNN and NCCL
// copied into it (include/cudnn*.h, include/nccl.h, lib64/libcudnn*, lib64/libnccl*,
// bin/cudnn64_8.dll), made of links only, so no install is touched. Its bin (and targets/<arch>)
// are real folders of links, and the toolkit's relative links inside itself are made again as they
// are, so that nvcc started from the view's bin takes the view's include and library folders (nvcc
// finds them from the path it was started by). Where a build ships only libcudnn.so.9, the view
// adds the linker's libcudnn.so beside it (libnccl.so beside libnccl.so.2 alike).
//
// A toolkit alone gets a view of its own ($CVM_ROOT/views/<toolkit id>) only while its nvcc
// (older than CUDA 12.0, which does not read NVCC_CCBIN) needs a host compiler handed over: that
// view's bin/nvcc is cvm's shim, so every way of starting it gets -ccbin.
#include <filesystem>

#include "activation/environment.h"
#include "store/resolve.h"
#include "store/store.h"
#include "platform/platform.h"

namespace cvm {

namespace fs = std::filesystem;

// Where the view of `r` lives (empty path when there is none: neither cuDNN nor NCCL, or only
// ones inside the toolkit's own folder, and no view of the toolkit's own).
fs::path view_path(const Store& store, const Resolved& r);

// Whether `r` has a cuDNN or NCCL outside the toolkit's own folder, so that a merged view shows
// them together (the shim asks, before every tool).
bool needs_merged_view(const Resolved& r);

// Fills `folder` (created, or empty) with the view of `r` as ensure_view makes it (its mark
// included), for `cvm verify` to compare the store's view with.
void fill_view(const Store& store, const Resolved& r, const fs::path& folder,
               platform::Os os = platform::host_os());

// Creates the view when it is missing or was made by an older cvm or for another host compiler
// choice (staged, then renamed into place, so concurrent callers are safe) and returns its path,
// or the empty path when none is needed.
fs::path ensure_view(const Store& store, const Resolved& r, platform::Os os = platform::host_os());

// After the host compiler choice of `toolkit` was worked out again: makes or removes the
// toolkit's own view, and has every view of the toolkit made again at its next use.
void refresh_toolkit_views(const Store& store, const Entry& toolkit,
                           platform::Os os = platform::host_os());

// layout_of() for `r` with its view (when there is one) and the host compiler cvm hands over.
Layout selection_layout(const Store& store, const Resolved& r,
                        platform::Os os = platform::host_os());

} // namespace cvm
