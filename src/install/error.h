#pragma once
// Errors raised by the installer. The message is one line naming the file or value and what to
// do; the exit code follows the contract: 2 for bad usage or input, 1 for an operation that failed.
#include <stdexcept>
#include <string>
#include <utility>

namespace cvm::install {

class InstallError : public std::runtime_error {
public:
    enum class Kind { Input, Operation };
    // `code` names the failure for scripts (`--json`: docs/cli-contract.md lists the codes);
    // empty: the default of its kind.
    InstallError(Kind kind, const std::string& message, std::string code = {})
        : std::runtime_error(message), kind_(kind), code_(std::move(code)) {}
    Kind kind() const { return kind_; }
    int exit_code() const { return kind_ == Kind::Input ? 2 : 1; }
    const std::string& code() const { return code_; }

private:
    Kind kind_;
    std::string code_;
};

// A download that reached no server (no network, no route to it, no such host), code "network".
// `url` is what it asked for; the installer that knows the whole fetch says what to get by other
// means (offline_fix), once.
class UnreachableError : public InstallError {
public:
    UnreachableError(const std::string& message, std::string url)
        : InstallError(Kind::Operation, message, "network"), url_(std::move(url)) {}
    const std::string& url() const { return url_; }

private:
    std::string url_;
};

// Bad input: a malformed manifest, an unknown component, a refused archive (exit code 2).
[[noreturn]] inline void fail_input(const std::string& message, std::string code = {}) {
    throw InstallError(InstallError::Kind::Input, message, std::move(code));
}
// An operation that failed: I/O, network, disk full (exit code 1).
[[noreturn]] inline void fail_operation(const std::string& message, std::string code = {}) {
    throw InstallError(InstallError::Kind::Operation, message, std::move(code));
}

} // namespace cvm::install
