#pragma once
// cuDNN's sub-libraries by major release: the one list that `cvm doctor` (the libraries a cuDNN
// loads) and the installer (the files a cuDNN archive must hold) both go by.
#include <string>
#include <vector>

namespace cvm {

// The names after "cudnn_" of the libraries cuDNN's main library loads (libcudnn_ops.so.9,
// cudnn_ops64_9.dll): none for 7 and earlier; 8: ops/cnn/adv x infer/train; 9 on: ops, cnn, adv,
// graph, heuristic, engines_precompiled, engines_runtime_compiled.
inline std::vector<std::string> cudnn_sub_libraries(int cudnn_major) {
    if (cudnn_major == 8)
        return {"ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"};
    if (cudnn_major >= 9)
        return {"ops",
                "cnn",
                "adv",
                "graph",
                "heuristic",
                "engines_precompiled",
                "engines_runtime_compiled"};
    return {};
}

} // namespace cvm
