#pragma once
// `cvm probe [SPEC] --python [PY]` (issue 40): PyTorch's, JAX's and TensorFlow's own checks, run by
// the Python that would run (or PY) under the selection's environment; see probe_python.cpp.
#include <string>

#include "project/selection.h"
#include "store/store.h"

namespace cvm::cli {

// Runs the checks and prints the report (JSON with `json`); returns the exit code: 0 every
// framework passed, 1 a problem. Throws UsageError for no Python or no framework in it.
int probe_python(const Store& store, const Selection& sel, const std::string& python, bool json);

} // namespace cvm::cli
