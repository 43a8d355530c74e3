#pragma once
// The libraries a program would load and where each comes from: the sets the selection names
// (or, without one, those a program would find), each file searched as the OS's loader searches
// it (linux_loader.h, windows_loader.h) in one scenario: this shell, or through cvm.

#include "cuda_libraries.h"
#include "diagnosis.h"

#include <map>
#include <string>
#include <vector>

namespace cvm::doctor {

// The environment a program starts with: "current" (this shell) or "selected" (through cvm).
struct Scenario {
    std::string name;
    std::map<std::string, std::string> env;
};

struct LibrarySet {
    std::string family;             // "cudnn", "cudart", "cublas"
    std::vector<LibraryName> names; // main first
    bool probing = false;           // not named by the selection: shown only when found
};

std::vector<LibrarySet> library_sets(const DoctorInputs& in);

// One row per library of the set, in its order.
std::vector<LibraryLoad> load_set(const DoctorInputs& in, const Scenario& sc,
                                  const LibrarySet& set);

} // namespace cvm::doctor
