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

// The cuDNN files each scenario loads, read for their real version (cudnn_files.h): the
// libraries' versions are replaced by what the files say, and a set whose files come from
// different releases or folders is reported, naming each file and version. Codes:
// cudnn-mixed-versions (error), cudnn-mixed-folders (warning).
std::vector<doctor::Finding> cudnn_set_findings(std::vector<doctor::LibraryLoad>& libraries);

} // namespace cvm::compat
