#pragma once
// `cvm doctor`'s NCCL findings, from the libnccl.so.2 rows of its report (which copy a program
// started here and through cvm loads, and the copies it shadows), the active Python's PyTorch
// and its own NCCL, the selection, /dev/shm and the variables NCCL reads.
//
// Codes (stable; docs/cli-contract.md):
//   nccl-shadowed        warning  the libnccl.so.2 a program loads hides copies of other releases
//   nccl-two-versions    warning  the NCCL programs load here is another release than PyTorch's own
//   framework-own-nccl   note     PyTorch brings its own NCCL: the selected one does not change it
//   nccl-cuda-mismatch   warning  an NCCL built for another CUDA major than the selected toolkit
//   shm-too-small        warning  /dev/shm is smaller than NCCL's shared-memory transport needs
//   nccl-transport-disabled note  NCCL_P2P_DISABLE / NCCL_SHM_DISABLE / NCCL_IB_DISABLE is set
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/diagnose.h"

namespace cvm::compat {

// What the checks read besides the report.
struct NcclMachine {
    std::map<std::string, std::string> env;
    std::optional<std::uint64_t> shm_bytes; // the size of /dev/shm; nullopt where it cannot be read
    // torch.cuda.nccl.version() of the active Python, when doctor imported torch anyway ("2.28.9").
    std::optional<std::string> torch_runtime_nccl;
};

// The smallest /dev/shm the check accepts: what NVIDIA's container guides ask for (--shm-size=1g).
constexpr std::uint64_t kNcclShmBytes = std::uint64_t(1) << 30;

// Reads each NCCL row's library for its real release (its banner: the row's version becomes the
// library's own, not its file name's) and returns the findings above.
std::vector<doctor::Finding> nccl_findings(doctor::DoctorReport& report,
                                           const NcclMachine& machine);

// The size of the file system holding `dir` (/dev/shm); nullopt when it cannot be read.
std::optional<std::uint64_t> file_system_bytes(const std::string& dir);

} // namespace cvm::compat
