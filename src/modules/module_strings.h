#pragma once
// How a modulefile writes a value: as a Lua string literal (Lmod) or a Tcl word (Environment
// Modules). Below the modulefiles (modules.h) and their driver check (module_driver.h), which
// both write values.
#include <string>

namespace cvm {

// A Lua string literal / a Tcl word in double quotes holding `s` exactly (nothing in it is
// substituted).
std::string lua_string(const std::string& s);
std::string tcl_string(const std::string& s);

} // namespace cvm
