#pragma once
// cvm-probe: load the cuDNN and CUDA runtime a program would load, run forward convolutions on
// the GPU, check them against a CPU reference, and report what was loaded from where.

#include "arguments.h"
#include "report.h"

#include <functional>

namespace cvm::probe {

// Runs the whole probe and hands the report to `deliver` while cuDNN's handle and the CUDA
// context are still up, so that a caller may end the process there and leave their teardown to
// the kernel. Never throws for a library's failure: every failure is a Problem.
void run_probe(const Options& options, const std::function<void(const Report&)>& deliver);

} // namespace cvm::probe
