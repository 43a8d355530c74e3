#pragma once
// Errors raised by the installer. The message is one line naming the file or value and what to
// do; the exit code follows the contract: 2 for bad usage or input, 1 for an operation that failed.
#include <stdexcept>
#include <string>

namespace cvm::install {

class InstallError : public std::runtime_error {
public:
    enum class Kind { Input, Operation };
    InstallError(Kind kind, const std::string& message)
        : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }
    int exit_code() const { return kind_ == Kind::Input ? 2 : 1; }

private:
    Kind kind_;
};

// Bad input: a malformed manifest, an unknown component, a refused archive (exit code 2).
[[noreturn]] inline void fail_input(const std::string& message) {
    throw InstallError(InstallError::Kind::Input, message);
}
// An operation that failed: I/O, network, disk full (exit code 1).
[[noreturn]] inline void fail_operation(const std::string& message) {
    throw InstallError(InstallError::Kind::Operation, message);
}

} // namespace cvm::install
