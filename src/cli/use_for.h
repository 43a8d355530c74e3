#pragma once
// `cvm use --for FRAMEWORK`: gathers the machine's facts (driver, GPUs, host compilers, what
// the store holds, the frameworks of the active Python for `--for .`, else the project's pins
// (src/compat/project_pins.h)), asks the solver (src/compat/solver.h), for a range or a bare name
// release by release from the newest (src/compat/project_wants.h), and writes its choice as `cvm
// use` writes a SPEC: in DIR/.cudaversion for `--for DIR`.
#include <string>

namespace cvm::cli {

struct UseForRequest {
    std::string target; // "tensorflow==2.10", "torch==2.5", "torch>=2.4", "torch", ".", "DIR"
    bool global = false;
    bool install = false;
    bool force = false; // write the choice even when it is not installed
    bool json = false;
};

void use_for(const UseForRequest& request);

} // namespace cvm::cli
