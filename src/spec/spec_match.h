#pragma once
// How a spec (CUDA[+CUDNN][+ncclVERSION]) matches toolkits, cuDNN builds and NCCL builds: the one
// place that decides it. Resolution (resolve.cpp), install (install/store_install.cpp), the known-
// release check of `cvm use` and the registry's choice of a cuDNN build (install/release_choice)
// ask it. Pure; tests/unit/core/spec_match_test.cpp holds its cases in one table.
#include <string_view>
#include <vector>

#include "spec/spec.h"

namespace cvm {

// The toolkit part: a toolkit's name (import --as) matches that id only (its release is not
// looked at); numbers match a release they prefix (12.4 is 12.4.1, not 12.40.0), never a named
// toolkit.
bool toolkit_matches(const Spec& spec, std::string_view id, const Version& release);
// A release of the registry (no id, so never a name).
bool toolkit_release_matches(const Spec& spec, const Version& release);

// The cuDNN part: its numbers prefix the build's version; a `-cudaX[.Y]` names the build's CUDA
// exactly. False when the spec has no cuDNN part.
bool cudnn_matches(const Spec& spec, const CudnnId& build);
// The same, and the build serves `toolkit` (cudnn.h: same minor per-minor, same major otherwise).
bool cudnn_fits(const Spec& spec, const CudnnId& build, const Version& toolkit);
// Among matching builds, whether `a` is chosen before `b`: one installed exactly as written
// first (an import recorded as 9.19.0 is not 9.19.0.56), then the newest version, then the newest
// CUDA.
bool cudnn_before(const Spec& spec, const CudnnId& a, const CudnnId& b);

// The NCCL part: its numbers prefix the build's version; a `-cudaX[.Y]` prefixes the build's CUDA.
bool nccl_matches(const Spec& spec, const NcclId& build);
// The same, and the build serves `toolkit` (its CUDA major).
bool nccl_fits(const Spec& spec, const NcclId& build, const Version& toolkit);
// The NCCL build for `toolkit` among `builds`: of its CUDA major and matching the spec; one
// installed exactly as written first, then one built for no newer CUDA minor than the toolkit's
// (a newer one may need a newer driver), then the newest release, and of it the build closest to
// the toolkit's minor. The index, or -1 when none fits.
int pick_nccl(const Spec& spec, const std::vector<NcclId>& builds, const Version& toolkit);

} // namespace cvm
