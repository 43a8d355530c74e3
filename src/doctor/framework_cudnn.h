#pragma once
// What cuDNN a framework's own wheel build loads under cvm's environment, from files alone: the
// judgement `cvm use` and `cvm doctor` give before the framework fails (issue 40).
//
// PyTorch's Linux wheels find their own cuDNN through DT_RPATH and preload it, so its front
// library (libcudnn.so.9) is the wheel's whatever LD_LIBRARY_PATH says; but cuDNN's front library
// opens its sub-libraries (libcudnn_graph, _ops, _engines_*, _heuristic) by name, and every way
// cvm starts programs puts the selected cuDNN's folder first on LD_LIBRARY_PATH. Where the front
// library's own search path is DT_RUNPATH (cuDNN 9.19's wheel), which comes after that variable,
// a selected cuDNN of the wheel's major and another release gives a mixed set, whose reported
// version is the selection's, and PyTorch refuses a reported release of another major or an older
// minor than the one it was built with (torch/backends/cudnn/__init__.py; the facts file). Where it
// is DT_RPATH $ORIGIN (9.26's, 9.28's), which comes first, it keeps its own.
// JAX's CUDA plugin does the same (jax_plugins/xla_cuda13's initialize() preloads the wheel's
// libcudnn.so.9 by full path; its sub-libraries are opened by name), and XLA refuses by the same
// rule (same major, minor at least the build's: cuda_dnn.cc), with its own words, at the first
// cuDNN use.
#include <optional>
#include <string>

#include "spec/spec.h"
#include "python_env.h"

namespace cvm::doctor {

struct FrameworkCudnnVerdict {
    enum class Kind {
        Own,     // it loads its own cuDNN whole (nothing selected, the same release, another major)
        Mixed,   // its front library with the selection's sub-libraries; it accepts the release
        Refused, // the same mixed set, and it refuses the reported release: it will raise
    } kind = Kind::Own;
    std::string message; // one clause: what it loads and what follows
    std::string fix;     // Mixed and Refused: select its own cuDNN (select_own_cudnn_fix)
};

// Who refuses a cuDNN release, and so the words of the failure to come.
enum class CudnnRefuser {
    PyTorch, // torch.backends.cudnn.version() raises "cuDNN version incompatibility"
    Xla,     // JAX: "Loaded runtime CuDNN library: X but source was compiled with: Y"
};

// `label` names the framework ("PyTorch 2.15.0"); `built` is the cuDNN it was built with (its
// METADATA's pin; the wheel's own release when unknown), `own` its wheel's release, `selected` the
// selection's cuDNN release (none: no cuDNN selected).
// `subs_by_rpath`: its front library finds its sub-libraries through DT_RPATH $ORIGIN (read from
// the file; cuDNN 9.2x's wheels), which LD_LIBRARY_PATH does not override.
FrameworkCudnnVerdict judge_framework_cudnn(const std::string& label, const Version& built, const Version& own,
                                            const std::optional<Version>& selected, bool subs_by_rpath,
                                            CudnnRefuser who);

// The verdict for a framework `f` with its own cuDNN wheel of a known release (PyTorch, JAX; found
// in a Python's site-packages), from its files (the cuDNN it was built with, its own release, its
// front library's RPATH), with the fix naming `toolkit`; nullopt for another framework, no own
// wheel or an unknown release. What `cvm doctor` and `cvm use` both say.
std::optional<FrameworkCudnnVerdict> judge_own_cudnn(const FrameworkInstall& f, const std::string& label,
                                                     const std::optional<Version>& selected,
                                                     const std::string& toolkit);

// The way out: select the framework's own cuDNN, imported from its wheel (`own_dir` is the
// wheel's library folder, .../nvidia/cudnn/lib), or none.
// `use_for`: `cvm use --for .` can do it in one command (PyTorch: it imports the wheels' cuDNN and
// NCCL and selects them with the toolkit the framework was built for).
std::string select_own_cudnn_fix(const std::string& own_dir, const Version& own, const std::string& toolkit,
                                 bool use_for = false);

// select_own_cudnn_fix for install `f` (its own cuDNN wheel and release; `cvm use --for .` for
// PyTorch), or nullopt where it has no own cuDNN of a readable release.
std::optional<std::string> own_cudnn_way_out(const FrameworkInstall& f, const std::string& toolkit);

} // namespace cvm::doctor
