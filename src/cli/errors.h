#pragma once
// How a failed command ends: one line for people on stderr, in cvm's words (the path, the reason
// and what to do; never a library's exception text) and, when the command line asked for `--json`,
// one document {"error": {"code": ..., "message": ...}} on stdout. The exit code is the same either
// way (docs/cli-contract.md lists the codes).
#include <exception>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "store/error_line.h"

namespace cvm::cli {

// system_error_line and error_text: store/error_line.h, shared with the shim and the hook.
using cvm::error_text;
using cvm::system_error_line;

// Whether the command line (without the program name) asks for JSON: a `--json` before any
// `--`, for any command but exec (whose words after its own options belong to the program).
bool wants_json(const std::vector<std::string>& words);

// Prints a failure. `line` is printed on stderr as it is when `prefixed` is false (a parse
// error's line already names cvm), else after "cvm: ".
void report_error(bool json, const std::string& code, const std::string& line, bool prefixed = true);

// Reports the exception being handled (call inside a catch block) and returns its exit code:
// 2 for bad usage or input, 1 for everything else. `command_line` turns a message into the line
// naming the command that failed ("cvm exec: ..."; usage.h's error_line).
int report_current_exception(bool json, const std::function<std::string(const std::string&)>& command_line);

// The code of a failed file operation: no_space, permission, not_found or io.
std::string error_code_of(const std::error_code& ec);

} // namespace cvm::cli
