#pragma once
// GPU architectures: the compute capabilities each toolkit's nvcc builds for
// (registry/gpu_archs.toml), the GPUs of this machine (nvidia-smi's compute_cap), and whether a
// toolkit can build for them: natively, only through the JIT compilation of an older PTX, or not.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/spec.h"

namespace cvm::compat {

struct GpuArchRow {
    Version cuda;                 // major.minor
    std::vector<unsigned> compute; // 75 = compute_75, lowest first
    std::string source;
    std::vector<std::string> inferred;
};

// Throws registry::RegistryError naming the file and line.
std::vector<GpuArchRow> parse_gpu_arch_table(std::string_view text, const std::string& origin);
// gpu_archs.toml of the registry folder, else the copy compiled in.
std::vector<GpuArchRow> load_gpu_arch_table();
const GpuArchRow* arch_row(const std::vector<GpuArchRow>& table, const Version& cuda);

struct Gpu {
    std::string name;
    unsigned cc = 0; // 90 for compute capability 9.0
};
// Lines "NVIDIA H200, 9.0" of `nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader`.
std::vector<Gpu> gpus_from_smi_compute_cap(std::string_view text);
// The GPUs of this machine through CVM_NVIDIA_SMI or nvidia-smi on PATH; empty when none answer.
std::vector<Gpu> detect_gpus();
// "sm_90 (NVIDIA H200, compute capability 9.0)", how every message names a GPU.
std::string describe_gpu(const Gpu& gpu);
// "9.0" of 90.
std::string cc_text(unsigned cc);

enum class ArchSupport { Native, PtxJit, None };
struct ArchJudgement {
    ArchSupport support = ArchSupport::Native;
    std::string message; // "" for Native
};
// `newer` (optional) is where to look for a toolkit that builds for the GPU.
ArchJudgement judge_arch(const GpuArchRow& row, const Gpu& gpu, const std::vector<GpuArchRow>& table);

} // namespace cvm::compat
