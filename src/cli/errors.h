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

namespace cvm::cli {

// "cannot create the folder /x: permission denied; check the permissions of /x's parent, or set
// CVM_ROOT to a folder you own". Paths in the store ($CVM_ROOT) name CVM_ROOT in the advice.
std::string system_error_line(const std::system_error& error);

// system_error_line for a std::system_error (std::filesystem::filesystem_error included), else
// the exception's own message (cvm's exceptions carry finished sentences).
std::string error_text(const std::exception& error);

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
