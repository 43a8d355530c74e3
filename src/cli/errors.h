#pragma once
// Errors from the system (a file that cannot be written, a folder that cannot be made) in cvm's
// words: the path, the reason and what to do, in one line; never a library's exception text.
#include <exception>
#include <string>
#include <system_error>

namespace cvm::cli {

// "cannot create the folder /x: permission denied; check the permissions of /x's parent, or set
// CVM_ROOT to a folder you own". Paths in the store ($CVM_ROOT) name CVM_ROOT in the advice.
std::string system_error_line(const std::system_error& error);

// system_error_line for a std::system_error (std::filesystem::filesystem_error included), else
// the exception's own message (cvm's exceptions carry finished sentences).
std::string error_text(const std::exception& error);

} // namespace cvm::cli
