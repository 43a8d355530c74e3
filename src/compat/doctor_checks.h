#pragma once
// The compatibility engine's findings for `cvm doctor` (added to doctor::diagnose's report).
#include <map>
#include <string>
#include <vector>

#include "core/store.h"
#include "doctor/diagnose.h"

namespace cvm::compat {

// The host compiler the selected toolkit's nvcc would use here (command-line flags from
// NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, NVCC_CCBIN, PATH) against what the toolkit supports.
// Codes: host-compiler-unsupported (error: nvcc will refuse it and cvm hands over nothing),
// host-compiler-auto (note: cvm hands nvcc a supported one), host-compiler-unknown (note).
std::vector<doctor::Finding> host_compiler_findings(const Store& store, const Entry& toolkit,
                                                    const std::map<std::string, std::string>& env);

} // namespace cvm::compat
