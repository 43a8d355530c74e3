#pragma once
// `cvm probe --python`: the frameworks' own checks, run by the user's Python under the selection's
// environment, and what their reports mean (issue 40). PyTorch: torch.backends.cudnn.version()
// (where it refuses a cuDNN of another release), the NCCL it reports, a convolution on the GPU
// compared with the CPU's in float64; JAX: its devices and a convolution; TensorFlow: its build
// info, GPUs and a convolution. On Linux also the cuDNN, NCCL, CUDA runtime and cuBLAS files the
// process maps (/proc/self/maps).
//
// The script runs once per framework, each in its own isolated interpreter (`-I`, started in "/":
// nothing of the project folder), since two frameworks in one process share whichever cuDNN
// loaded first. It prints one line, kFrameworkReportMark followed by JSON, whatever happens: an
// import that fails or a check that raises is reported, not thrown.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cvm::doctor {

extern const char* const kFrameworkCheckScript; // python; sys.argv[1]: torch, jax or tensorflow
extern const char* const kFrameworkReportMark;   // "cvm-framework-check: "

// The frameworks checked, in order, by FrameworkInstall's names (python_env.h's framework_module
// and framework_title give the module the script imports and the name for people).
const std::vector<std::string>& checked_frameworks(); // pytorch, jax, tensorflow

struct FrameworkRun {
    std::string framework; // the module: torch, jax, tensorflow
    bool installed = false;
    std::string version;
    std::optional<std::string> cuda;        // the CUDA it was built for
    std::optional<std::string> cudnn_built; // the cuDNN it was built with, where it says
    std::optional<long long> cudnn_version; // its own answer (torch.backends.cudnn.version())
    std::optional<std::string> nccl_version;
    // Its own failure (the first line of the exception) and the step that raised: import, cudnn,
    // devices.
    std::string error;
    std::string error_step;
    int gpus = 0; // the GPUs it sees
    std::string gpu_name;
    struct Convolution {
        bool ran = false;
        bool matched = false;
        double max_error = 0; // max |gpu - cpu| / max |cpu|
        std::string error;    // it raised
    } convolution;
    // The library files the process mapped; nullopt where that cannot be told (Windows).
    std::optional<std::vector<std::string>> loaded;
};

// The report in a check's output (the last line carrying the mark); nullopt when there is none or
// it is not the JSON the script writes.
std::optional<FrameworkRun> parse_framework_report(std::string_view output);

struct CheckFinding {
    std::string kind; // cudnn_refused, foreign_symbols, library_not_found, framework_error, wrong_result,
                      // mixed_cudnn, mixed_cublas
    std::string message;
    std::string fix; // empty: none to give
};

struct FrameworkJudgement {
    std::vector<CheckFinding> problems; // it fails, or computes wrongly
    std::vector<CheckFinding> warnings; // it loaded a mixed cuDNN or cuBLAS (with a refusal: why)
    std::vector<std::string> not_checked;
    std::string summary; // one line for a framework that passed
};

// What a run means. `label` names it ("PyTorch 2.15.0"); `fix` is the way out where it loads
// another cuDNN than its own (select its own); `tolerance` the convolution's bound.
FrameworkJudgement judge_framework_run(const FrameworkRun& run, const std::string& label, const std::string& fix,
                                       double tolerance);

// The folders (in first-mapped order) the cuDNN files of `loaded` come from, with the names of the
// files from each.
using FolderFiles = std::vector<std::pair<std::string, std::vector<std::string>>>;
FolderFiles cudnn_files(const std::vector<std::string>& loaded);
std::vector<std::string> cudnn_folders(const std::vector<std::string>& loaded);

} // namespace cvm::doctor
