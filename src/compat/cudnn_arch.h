#pragma once
// The GPUs each cuDNN build supports (registry/cudnn_archs.toml, from NVIDIA's cuDNN support
// matrices) and the judgement of a cuDNN build for a GPU of this machine.
#include <string>
#include <string_view>
#include <vector>

#include "compat/gpu_arch.h"
#include "spec/spec.h"

namespace cvm::compat {

struct CudnnArchRow {
    Version first, last;          // cuDNN major.minor, both included
    std::vector<unsigned> cuda;   // CUDA variant majors
    std::vector<unsigned> compute; // as the matrix prints them, lowest first
    bool forward_compatible = false;
    std::string source;
    std::vector<std::string> inferred;
};

// Throws registry::RegistryError naming the file and line.
std::vector<CudnnArchRow> parse_cudnn_arch_table(std::string_view text, const std::string& origin);
// cudnn_archs.toml of the registry folder, else the copy compiled in.
std::vector<CudnnArchRow> load_cudnn_arch_table();
// The row of a cuDNN release (8.1.0.77) built for a CUDA (11.2 or 12); nullptr when none.
const CudnnArchRow* cudnn_arch_row(const std::vector<CudnnArchRow>& table, const Version& cudnn,
                                   const Version& cuda);

// Whether the row's list serves a compute capability: one entry of the same major not above it.
bool cudnn_row_serves(const CudnnArchRow& row, unsigned cc);

enum class CudnnArchSupport { Supported, ForwardOnly, None };
struct CudnnArchJudgement {
    CudnnArchSupport support = CudnnArchSupport::Supported;
    std::string message; // "" when supported
};
// "cuDNN 8.1.0 does not support sm_90 (NVIDIA H200, compute capability 9.0): ..."; the table
// names the releases that do.
CudnnArchJudgement judge_cudnn_arch(const CudnnArchRow& row, const Version& cudnn, const Gpu& gpu,
                                    const std::vector<CudnnArchRow>& table);

} // namespace cvm::compat
