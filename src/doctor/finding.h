#pragma once
// One finding of `cvm doctor`: how grave, a stable code, what is wrong and the fix. Below the
// checks that make findings (variable_checks.h, ...) and the judgement that gathers them
// (diagnose.h).
#include <string>

namespace cvm::doctor {

enum class Severity { error, warning, note };
const char* to_string(Severity s);

struct Finding {
    Severity severity = Severity::note;
    std::string code;    // stable identifier, e.g. "sublibrary-missing"
    std::string message; // what is wrong, naming the files
    std::string fix;     // the command or change that fixes it ("" for notes without one)
};

} // namespace cvm::doctor
