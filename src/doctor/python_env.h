#pragma once
// PyTorch, TensorFlow and JAX in the active Python: which CUDA and cuDNN they were built with and
// whether they bring their own cuDNN. Python is asked only for its search path (importing torch
// is slow and may crash on a broken machine); the facts come from the installed files:
//   torch/version.py           __version__ = '2.1.2+cu121', cuda = '12.1'
//   torch/lib/                 a bundled libcudnn.so.N / cudnn64_N.dll
//   tensorflow/python/platform/build_info.py   'cuda_version': '11.2', 'cudnn_version': '8'
//   nvidia/cudnn/              the nvidia-cudnn-cu* wheel (with its *.dist-info version)
//   nvidia/nccl/lib/           the nvidia-nccl-cu* wheel PyTorch loads (its library's own version)
//   jax/version.py             _release_version: str = '0.10.2' (else jax-*.dist-info's name)
//   jax_cuda13_plugin/, jax_plugins/xla_cuda13/   JAX's CUDA plugin (two wheels); the plugin's
//                              METADATA's lower bounds: nvidia-cuda-runtime>=13.0.48 (the CUDA),
//                              nvidia-cudnn-cu13<10.0,>=9.12.0.46 (the cuDNN it was built with)
// CVM_PYTHON names the interpreter (tests use a fake); else the VIRTUAL_ENV's python3 / python;
// else python3, then python, on PATH.

#include "file_system_view.h"
#include "own_cublas.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cvm::doctor {

struct FrameworkInstall {
    std::string name;                 // "pytorch", "tensorflow", "jax"
    std::string version;              // "2.1.2+cu121", "2.10.0", "0.10.2"; empty when unknown
    std::string location;             // the package folder
    std::optional<std::string> cuda;  // the CUDA it was built with ("12.1"); none: a CPU build
    std::optional<std::string> cudnn; // the cuDNN it was built with, when the files say ("8"; PyTorch: its METADATA's
                                      // pin "9.26.0.51"; JAX: its plugin's lower bound "9.12.0.46")
    // Its own cuDNN (torch/lib, or the nvidia-cudnn wheel beside it), when present.
    std::optional<std::string> own_cudnn_dir;
    std::optional<std::string> own_cudnn_version; // from the wheel's dist-info name
    // Whether its front library (libcudnn.so.N) finds its sub-libraries through DT_RPATH $ORIGIN,
    // which comes before LD_LIBRARY_PATH (cuDNN 9.2x's wheels), rather than DT_RUNPATH, which
    // comes after it (9.19's): then no selected cuDNN can mix into it.
    bool own_cudnn_rpath = false;
    // Its own NCCL (PyTorch: the nvidia-nccl-cu* wheel's nvidia/nccl/lib, or torch/lib), its
    // release and CUDA read from the library's own text ("NCCL version 2.28.9+cuda13.0").
    std::optional<std::string> own_nccl_library;
    std::optional<std::string> own_nccl_version; // "2.28.9"
    std::optional<std::string> own_nccl_cuda;    // "13.0"
    // Its own cuBLAS wheel and how it reaches it (own_cublas.h), when present.
    std::optional<OwnCublas> own_cublas;
    // Why its files are not whole, where they are not: "/site/torch/version.py is missing or
    // unreadable" (a package folder with its __init__.py or its dist-info but not the file its
    // version is read from: pip left it half-installed, or permissions keep the user out). Then
    // only its name, location and the dist-info's version are known.
    std::string damaged;
};

// The way out for a damaged install `f` of `python`: "reinstall it: `PY -m pip install
// --force-reinstall --no-deps torch==2.15.0+cu132`" (without the version when unknown).
std::string reinstall_fix(const FrameworkInstall& f, const std::string& python);

struct PythonInfo {
    std::string executable;
    std::string version; // "3.10.12"
    std::vector<std::string> search_path;
    std::vector<FrameworkInstall> frameworks;
};

// How a framework's name is written for people: "PyTorch", "TensorFlow", "JAX".
std::string framework_title(const std::string& name);
// The module a framework `name` ("pytorch", "jax", "tensorflow") is imported as, which is also its
// pip distribution's name: "torch", "jax", "tensorflow".
std::string framework_module(const std::string& name);

// Readers of the single files (pure).
std::optional<std::string> python_string_assignment(std::string_view text, std::string_view name);
std::optional<std::string> build_info_value(std::string_view text, std::string_view key);

// Looks for the frameworks in `search_path` (the first folder holding a package wins, as for
// import).
std::vector<FrameworkInstall> find_frameworks(const std::vector<std::string>& search_path,
                                              const FileSystemView& fs);

// The interpreter to ask: CVM_PYTHON, else VIRTUAL_ENV's, else python3 / python on PATH; empty
// when none.
std::string default_python();

// The start of every program cvm runs in the active Python. That python runs isolated
// (platform::capture_python: the current folder, which may be a cloned project with its own
// json.py, is never on its path), so its path lacks the user's site-packages that a program the
// user starts has (outside a virtual environment, unless PYTHONNOUSERSITE): they are put back
// where site.py puts them, before the system's.
extern const char* const kUserSitePrelude;

// Runs `python` (isolated) for its version and sys.path, then find_frameworks. nullopt when it
// cannot run.
// `why`, when given, gets one clause on failure: "PY did not say where its packages are within 10 s
// and was stopped", "PY printed no search path (exit 1): ...", "PY was killed by signal 11".
std::optional<PythonInfo> inspect_python(const std::string& python, const FileSystemView& fs,
                                         std::string* why = nullptr);

} // namespace cvm::doctor
