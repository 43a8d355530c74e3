#pragma once
// How a failed command ends: one line for people on stderr and, when the command line asked for
// `--json`, one document {"error": {"code": ..., "message": ...}} on stdout. The exit code is the
// same either way (docs/cli-contract.md lists the codes).
#include <string>
#include <system_error>
#include <vector>

namespace cvm::cli {

// Whether the command line (without the program name) asks for JSON: a `--json` before any
// `--`, for any command but exec (whose words after its own options belong to the program).
bool wants_json(const std::vector<std::string>& words);

// Prints a failure. `line` is printed on stderr as it is when `prefixed` is false (a parse
// error's line already names cvm), else after "cvm: ".
void report_error(bool json, const std::string& code, const std::string& line, bool prefixed = true);

// Reports the exception being handled (call inside a catch block) and returns its exit code:
// 2 for bad usage or input, 1 for everything else.
int report_current_exception(bool json);

// The code of a failed file operation: no_space, permission, not_found or io.
std::string error_code_of(const std::error_code& ec);

} // namespace cvm::cli
