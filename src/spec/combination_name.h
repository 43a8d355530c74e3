#pragma once
// The name of a combination of a toolkit and its libraries, and its parts back from the name.
#include <string>

namespace cvm {

// The name of a combination (Resolved::active, cvm.lock's `active`, a view's folder):
// TOOLKIT[+CUDNN][+ncclNCCL], "11.2.2+8.1.0.77-cuda11.2", "12.4.1+nccl2.21.5-cuda12.4".
std::string combination_name(const std::string& cuda, const std::string* cudnn,
                             const std::string* nccl);

// The parts of a combination's name, combination_name's inverse: each '+' part after the first
// is the NCCL's ("nccl" and its id) or the cuDNN's. Empty strings for absent parts.
struct CombinationParts {
    std::string cuda, cudnn, nccl;
};
CombinationParts combination_parts(const std::string& name);

} // namespace cvm
