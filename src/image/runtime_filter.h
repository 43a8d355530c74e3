#pragma once
// What `cvm export --oci --runtime` leaves out of a toolkit, cuDNN build or merged view: what
// only building needs, as NVIDIA's `-runtime` images leave it to their `-devel` ones.
#include <string_view>

namespace cvm::image {

// True when `rel` (a '/'-separated path inside a toolkit, a cuDNN build or a merged view) is
// needed only to build programs: the compiler and the other tools of `bin/` and `nvvm/`, headers
// (any `include` folder, `*.h`, `*.hpp`, `*.cuh`), static libraries (`*.a`), the link-time stubs
// (`stubs/`) and samples (`samples/`, `extras/demo_suite/`). Shared libraries, licences and
// version files stay.
bool build_only(std::string_view rel);

} // namespace cvm::image
