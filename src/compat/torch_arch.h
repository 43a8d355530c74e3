#pragma once
// PyTorch's compiled GPU architectures (`torch.cuda.get_arch_list()` of the active Python: "sm_50",
// ..., "sm_90", "compute_90") against the GPUs of this machine.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compat/gpu_arch.h"

namespace cvm::compat {

// The list printed (as JSON) by the program torch_arch_list runs; nullopt when the output holds
// none. Tests feed it real outputs.
std::optional<std::vector<std::string>> parse_torch_arch_output(std::string_view text);

// Imports torch in `python` (slow: only when a GPU is there to judge) and asks for its
// architectures: get_arch_list(), or the compiled list itself (torch._C._cuda_getArchFlags)
// where get_arch_list() answers [] because CUDA is not usable. nullopt when python fails, times
// out or prints nothing usable; an empty list for a CPU build.
std::optional<std::vector<std::string>> torch_arch_list(const std::string& python);

// What the same one run of `python` says (torch_arch_list runs it once per interpreter): the
// architectures and torch.cuda.nccl.version(), the NCCL PyTorch really loaded.
struct TorchFacts {
    std::vector<std::string> archs;
    std::optional<std::string> nccl; // "2.28.9"
};
// The NCCL line the program prints before the architectures: {"nccl": [2, 28, 9]} (an int code
// from old releases: 2708); nullopt when absent or null.
std::optional<std::string> parse_torch_nccl_output(std::string_view text);
// The facts of `python` when torch_arch_list has run it in this process; never runs it itself.
std::optional<TorchFacts> torch_facts_if_run(const std::string& python);

enum class TorchArchSupport { Native, PtxJit, None };
struct TorchArchJudgement {
    TorchArchSupport support = TorchArchSupport::Native;
    std::string message; // "" for Native
};
// A cubin sm_XY runs on compute capabilities X.Y to X.9 (sm_90a only on 9.0); PTX compute_XY is
// JIT-compiled for any newer GPU. `torch` names the build in the message ("PyTorch 2.1.2+cu121").
TorchArchJudgement judge_torch_arch(const std::vector<std::string>& arch_list, const Gpu& gpu,
                                    const std::string& torch);

} // namespace cvm::compat
