#pragma once
// cvm-probe's command line: what to probe and how (Options), its parsing, and the environment it
// warns about. Below the probe's run (probe.h), its state (prober.h) and the NCCL check.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cvm::probe {

struct Options {
    bool json = false;
    bool benchmark = false;
    int cudnn_major = -1;  // only libcudnn.so.<N> / cudnn64_<N>.dll; -1: 9, 8, 7
    int cudart_major = -1; // only that CUDA runtime; -1: cuDNN's own CUDA first, then 13..10
    int device = 0;
    // Folders the selection put cuDNN / the CUDA runtime in (`cvm probe` passes them): a library
    // of that kind loaded from anywhere else is a problem ("not_selected").
    std::vector<std::string> expect_cudnn_dirs;
    std::vector<std::string> expect_cudart_dirs;
    // The selected build's version ("9.19.0", up to 3 numbers compared): a loaded cuDNN that
    // reports another one is a problem ("not_selected"), even from the selected folder.
    std::string expect_cudnn_version;
    bool skip_cudnn = false; // --no-cudnn
    // --nccl: load libnccl.so.2, one communicator over every visible GPU, all-reduces checked
    // exactly from nccl_min_bytes to nccl_max_bytes (doubling); one GPU: one all-reduce.
    bool nccl = false;
    std::size_t nccl_min_bytes = std::size_t(8) << 20;
    std::size_t nccl_max_bytes = std::size_t(1) << 30;
    std::vector<std::string> expect_nccl_dirs;
    std::string
        expect_nccl_version; // "2.28" or "2.28.9": a loaded NCCL reporting another is not_selected
};

struct Arguments {
    Options options;
    bool help = false;
    bool version = false;
    std::string error; // non-empty: a usage error (exit code 2)
};

Arguments parse_arguments(const std::vector<std::string>& args);
std::string usage_text();

// The warning for CUDA_MODULE_LOADING=EAGER in this process's environment; nullopt when unset
// or another value.
std::optional<std::string> eager_module_loading();

} // namespace cvm::probe
