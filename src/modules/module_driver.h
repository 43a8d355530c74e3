#pragma once
// The driver check of a cuda module (`cvm export`): at load time the module reads the node's
// NVIDIA driver (/proc/driver/nvidia/version, or CVM_PROC_DRIVER_VERSION naming another file;
// else `nvidia-smi --query-gpu=driver_version --format=csv,noheader` on PATH) and
//   - refuses to load below the minor-version-compatibility floor of the toolkit's major,
//   - warns below the toolkit release's own floor (programs run through minor-version
//     compatibility, without what needs the newer driver),
//   - says nothing where no driver answers (login and build nodes).
#include <string>

namespace cvm {

// Linux driver floors of one toolkit, as NVIDIA writes them ("460.32.03"); empty when unknown.
struct ModuleDriverFloors {
    std::string release; // the release's own minimum (Table 3 of the release notes)
    std::string compat;  // the major's minor-version-compatibility floor (Table 2)
    unsigned major = 0;
};

// The check as Lua (Lmod) and Tcl modulefile code, for the module named `name` ("cuda/11.2.2")
// of toolkit `version`. Empty when neither floor is known.
std::string driver_check_lua(const std::string& name, const std::string& version, const ModuleDriverFloors& f);
std::string driver_check_tcl(const std::string& name, const std::string& version, const ModuleDriverFloors& f);

} // namespace cvm
