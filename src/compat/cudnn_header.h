#pragma once
// `cvm doctor`: the cudnn.h a build started in this shell would compile against. nvcc adds
// -I<its folder>/../targets/<arch>/include (from the path it is started by), then the compilers
// search CPATH and their default folders (/usr/local/include, /usr/include/<multiarch>,
// /usr/include): a cudnn.h of another release there wins over nothing, and the program then
// compiles against one cuDNN and loads another.
#include <map>
#include <string>
#include <vector>

#include "doctor/diagnose.h"

namespace cvm::compat {

// Where `#include <cudnn.h>` leads for a build with this environment: the file, or "" for none.
// `nvcc` is the nvcc the build runs ("" when none is on PATH).
std::string cudnn_header_seen(const std::string& nvcc,
                              const std::map<std::string, std::string>& env);

// Code cudnn-header-elsewhere (warning): a build started in this shell would compile against a
// cudnn.h of another release than the selected cuDNN's; the message names the file and both
// releases. Nothing when the shell's nvcc is cvm's (a shim or the selection's view), which
// compiles against the selection's.
std::vector<doctor::Finding> cudnn_header_findings(const doctor::DoctorReport& report,
                                                   const std::map<std::string, std::string>& env,
                                                   const std::string& shims_dir);

} // namespace cvm::compat
