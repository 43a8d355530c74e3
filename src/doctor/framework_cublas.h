#pragma once
// What cuBLAS a framework's own wheels load under cvm's environment, from files alone: the
// judgement `cvm use` and `cvm doctor` give (issue 40), beside framework_cudnn.h's for cuDNN.
//
// cuBLAS is two libraries, libcublas.so.N and libcublasLt.so.N, which libcublas needs by name.
// Under cvm the selected toolkit's library folder comes first on LD_LIBRARY_PATH, and ld.so looks
// there before a library's DT_RUNPATH but after its DT_RPATH. So:
//  - PyTorch 2.15's torch/__init__.py loads the wheel's libcublasLt and then libcublas by full path
//    ("Order matters! We must preload libcublasLt BEFORE libcublas"), and its libtorch_cuda.so names
//    both (DT_NEEDED) and finds them through its DT_RPATH ($ORIGIN/../../nvidia/cu13/lib): ld.so maps
//    a library's direct needs before theirs. Either way both are the wheel's whatever LD_LIBRARY_PATH
//    holds;
//  - JAX's CUDA plugin loads the wheel's libcublas.so.N by full path (jax_plugins/xla_cudaN's
//    _load_nvidia_libraries), and that library's own need of libcublasLt.so.N is looked up by name:
//    through its DT_RPATH $ORIGIN (cuBLAS 13.10's wheel) its own, through DT_RUNPATH (13.4's) the
//    one LD_LIBRARY_PATH gives first: a mixed cuBLAS where that one is as new as the wheel's; an
//    older one lacks symbols the wheel's libcublas binds to ("undefined symbol: ..., version
//    libcublasLt.so.13", seen here), so that load fails, the plugin loads libcublasLt by full path
//    next, and its extensions open libcublas by name through their DT_RPATH: its own, whole;
//  - a framework that reaches neither ahead of LD_LIBRARY_PATH loads the selected toolkit's.
#include "file_system_view.h"
#include "python_env.h"

#include <optional>
#include <string>
#include <vector>

namespace cvm::doctor {

struct FrameworkCublasVerdict {
    enum class Kind {
        Own,   // its own libcublas and libcublasLt
        Mixed, // its own libcublas with another libcublasLt
        Other, // another release's libcublas and libcublasLt
    } kind = Kind::Own;
    std::string message; // one clause: what it loads and why
    std::string fix;     // Mixed and Other
};

// The verdict for `f` (labelled "PyTorch 2.15.0") when LD_LIBRARY_PATH holds `library_path`, in
// order (the selection's environment); nullopt when `f` has no own cuBLAS wheel or is TensorFlow,
// whose way to its wheel (XLA opens cuBLAS by name) is not read.
std::optional<FrameworkCublasVerdict> judge_own_cublas(const FrameworkInstall& f, const std::string& label,
                                                       const std::vector<std::string>& library_path,
                                                       const FileSystemView& fs);

} // namespace cvm::doctor
