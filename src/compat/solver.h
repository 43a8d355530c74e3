#pragma once
// `cvm use --for FRAMEWORK`: the CUDA toolkit, and the cuDNN where one is wanted, that suit
// PyTorch or TensorFlow on a machine. Pure: the machine comes in as a description (MachineFacts)
// and the knowledge as the registry's tables, so that a table test needs no real machine. The
// CLI (src/cli/use_for.cpp) gathers the facts and writes the choice.
//
// The constraints, in the order they are applied: the framework (the CUDA, and for TensorFlow
// the cuDNN, it was built and tested with), the platform (TensorFlow's native Windows GPU
// builds end with 2.10), the driver (the toolkit's minimum; the minor-version compatibility
// floor is the hard limit), the GPUs (a toolkit that cannot build for one is out; one that only
// JIT-compiles an older PTX is taken last), the cuDNN, and, never to refuse one (the
// frameworks' wheels need no nvcc), an installed host compiler nvcc accepts: a toolkit that has
// one is taken first, others get a note with what to install. What is installed comes first,
// then the newest release.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compat/solver_facts.h"
#include "spec/spec.h"
#include "registry/registry.h"

namespace cvm::compat {

// One framework to suit: from the command line (`tensorflow==2.10`) or found installed in a
// Python environment (then `built_cuda` is what its files say it was built with).
struct FrameworkWant {
    std::string name;  // "pytorch" or "tensorflow"
    Version version;   // "2.10", "2.5.1"; may be empty for an installed one whose files do not say
    std::string label; // how the user named or has it: "tensorflow==2.10", "torch 2.5.1+cu124"
    bool installed = false;
    std::optional<Version> built_cuda;  // torch.version.cuda / build_info's cuda_version, or a
                                        // "+cu124" in the version asked for; installed and
                                        // nullopt: a CPU build
    std::optional<Version> built_cudnn; // build_info's cudnn_version (TensorFlow)
    // Where a built_cuda that is asked for comes from, where not a +cu tag on the command line:
    // "pytorch-cuda=12.1 from environment.yml:8"
    std::string cuda_source;
    std::string source; // the project file's line that pins it ("requirements.txt:3"); empty
                        // for the command line and the active Python
    std::string own_cudnn; // PyTorch: its own cuDNN ("torch/lib", "nvidia-cudnn-cu12 9.1.0.70")
    // PyTorch on Linux: its own cuDNN and NCCL wheels, as `cvm import` reads their folders
    // (nvidia/cudnn, nvidia/nccl). A pick selects them, so that what cvm puts first on the
    // library path is what the framework loads without cvm.
    std::optional<CudnnId> own_cudnn_build;
    std::string own_cudnn_folder;
    std::optional<NcclId> own_nccl_build;
    std::string own_nccl_folder;
};

// Bad input (an unknown framework or version): the message is one line with a did-you-mean
// where one is close. The CLI turns it into exit code 2.
class FrameworkInputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Parses `NAME[==VERSION]` ("tensorflow==2.10", "torch==2.5.1+cu124", "pytorch") against the
// registry. Without a version, the newest release the registry knows. Throws FrameworkInputError.
FrameworkWant parse_framework_want(const registry::Registry& reg, const std::string& text);

struct Pick {
    Version toolkit; // 11.2.2
    bool toolkit_installed = false;
    std::optional<CudnnId> cudnn; // the build; nullopt when none is paired (PyTorch)
    bool cudnn_installed = false;
    std::optional<NcclId> nccl; // the framework's own NCCL wheel, when selected
    // The framework's own builds are selected: the spec names them exactly (with -cudaX).
    bool own_builds = false;
    std::vector<Reason> reasons; // one line per choice, in constraint order
    // 11.2.2, 11.2.2+8.1.1.33, or with own builds 13.2.2+9.26.0.51-cuda13+nccl2.30.7-cuda13.2
    Spec spec() const;
};

struct SolveResult {
    std::optional<Pick> pick;
    Constraint ruled_out_by = Constraint::Framework; // when there is no pick
    std::string why;                                 // one line, when there is no pick
    std::vector<std::string> notes;                  // constraints skipped, and warnings
};

SolveResult solve(const std::vector<FrameworkWant>& wants, const MachineFacts& machine,
                  const Knowledge& know);

} // namespace cvm::compat
