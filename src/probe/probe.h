#pragma once
// cvm-probe: load the cuDNN and CUDA runtime a program would load, run forward convolutions on
// the GPU, check them against a CPU reference, and report what was loaded from where.

#include "report.h"

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
};

struct Arguments {
    Options options;
    bool help = false;
    bool version = false;
    std::string error; // non-empty: a usage error (exit code 2)
};

Arguments parse_arguments(const std::vector<std::string>& args);
std::string usage_text();

// Runs the whole probe. Never throws for a library's failure: every failure is a Problem.
Report run_probe(const Options& options);

} // namespace cvm::probe
