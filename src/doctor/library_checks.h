#pragma once
// Findings about the libraries a program would load: each set loaded in this shell and through
// cvm (library_loads.h), the rows added to the report, and what is wrong with them (missing,
// unloadable, outside the selection, mixed builds, another copy in this shell).

#include "diagnosis.h"

namespace cvm::doctor {

void check_libraries(const DoctorInputs& in, DoctorReport& report);
// Windows: Python 3.8 and later do not search PATH for an extension's DLLs. Reads the rows
// check_libraries added.
void check_python_dll_rule(const DoctorInputs& in, DoctorReport& report);

} // namespace cvm::doctor
