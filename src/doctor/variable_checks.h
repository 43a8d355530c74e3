#pragma once
// Findings about variables of the environment that change how CUDA programs run without
// changing which libraries load (CUDA_MODULE_LOADING=EAGER).

#include "finding.h"

#include "platform/platform.h"

#include <map>
#include <string>
#include <vector>

namespace cvm::doctor {

std::vector<Finding> variable_findings(const std::map<std::string, std::string>& env,
                                       platform::Os os);

} // namespace cvm::doctor
