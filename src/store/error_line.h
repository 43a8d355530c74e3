#pragma once
// A failed file operation as one line in cvm's words, for every program of cvm (the shim and the
// prompt hook too, which must not print a library's exception text or a staging name): the path
// the user knows, the reason and what to do. "cannot create the folder /x: permission denied;
// check the permissions of /x's parent, or set CVM_ROOT to a folder you own". Paths in the store
// ($CVM_ROOT) name CVM_ROOT in the advice; a temporary name (.staging/..., NAME.part, .NAME.tmpPID)
// is replaced by the file it was to become or the folder it was in.
#include <exception>
#include <string>
#include <system_error>

namespace cvm {

std::string system_error_line(const std::system_error& error);

// system_error_line for a std::system_error (std::filesystem::filesystem_error included), else
// the exception's own message (cvm's exceptions carry finished sentences).
std::string error_text(const std::exception& error);

} // namespace cvm
