#pragma once
// The compatibility engine's findings for `cvm doctor` (added to doctor::diagnose's report).
#include <map>
#include <string>
#include <vector>

#include "store/resolve.h"
#include "store/store.h"
#include "doctor/diagnose.h"

namespace cvm::compat {

// The host compiler the selected toolkit's nvcc would use here (command-line flags from
// NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, NVCC_CCBIN, PATH) against what the toolkit supports.
// Codes: host-compiler-unsupported (error: nvcc will refuse it and cvm hands over nothing),
// host-compiler-auto (note: cvm hands nvcc a supported one), host-compiler-missing (note: no
// compiler at all, a machine that only runs programs), host-compiler-unknown (note).
std::vector<doctor::Finding> host_compiler_findings(const Store& store, const Entry& toolkit,
                                                    const std::map<std::string, std::string>& env);

// The GPUs' compute capabilities (nvidia-smi) against the architectures the toolkit builds for,
// the selected cuDNN build supports (registry/cudnn_archs.toml) and the active Python's PyTorch
// was compiled for (torch.cuda.get_arch_list(), asked only when a GPU build of torch is there).
// Codes: gpu-arch-unsupported (error: the toolkit's programs cannot run on a GPU here),
// gpu-arch-jit (note: only an older PTX, JIT-compiled at start), cudnn-arch-unsupported (error),
// cudnn-arch-forward (note: cuDNN 9's forward-compatible subset only), torch-arch-unsupported
// (error), torch-arch-jit (note).
std::vector<doctor::Finding> gpu_arch_findings(const Resolved& resolved,
                                               const std::optional<doctor::PythonInfo>& python);

// The cuDNN files each scenario loads, read for their real version (cudnn_files.h): the
// libraries' versions become what the files say, and the doctor's per-file
// `sublibraries-mixed` findings of cuDNN become one per scenario naming every file, its release,
// how that is known and its folder, with the owner of the odd files in the fix. A set of two
// releases in one folder (which file names cannot show) is found too.
void revise_cudnn_sets(doctor::DoctorReport& report);

} // namespace cvm::compat
