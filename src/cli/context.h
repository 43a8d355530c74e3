#pragma once
// What every command shares: the store, the selection, errors with exit codes, JSON output.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "activation/environment.h"
#include "store/resolve.h"
#include "project/selection.h"
#include "store/store.h"

namespace CLI {
class App;
}

namespace cvm::cli {

namespace fs = std::filesystem;

// An error with a name for scripts: `--json` prints {"error": {"code": CODE, "message": ...}}
// (errors.h; docs/cli-contract.md lists the codes). An empty code takes its class's default.
class CodedError : public std::runtime_error {
public:
    explicit CodedError(const std::string& message, std::string code = {})
        : std::runtime_error(message), code_(std::move(code)) {}
    const std::string& code() const { return code_; }

private:
    std::string code_;
};

// Bad usage or bad input: exit code 2 (code "invalid_input" unless given).
class UsageError : public CodedError {
public:
    using CodedError::CodedError;
};

// The operation failed: exit code 1, the default for any other exception (code "failed" unless
// given).
class Failure : public CodedError {
public:
    using CodedError::CodedError;
};

// A command that wants a specific exit code without a message (doctor/probe findings, exec).
struct ExitCode {
    int code;
};

Store open_store();

// Throws the filesystem error of a store root that is a file, or below one (CVM_ROOT=/etc/passwd):
// a command that only reads the store would otherwise take it for an empty one.
void require_store_folder(const Store& store);

// The selection for the current folder (CVM_VERSION, .cudaversion, global), or `explicit_spec`
// when given. Throws UsageError for bad specs (the message names the file and line).
Selection current_selection(const Store& store, const std::optional<std::string>& explicit_spec);

// Resolves a non-system selection; throws Failure with what to run when nothing matches.
Resolved resolve_selection(const Store& store, const Selection& sel);

// Spec from a command-line argument; throws UsageError naming the argument.
Spec spec_argument(const std::string& text, const std::string& what = "SPEC");

// The full environment change list of a resolved selection for the host OS (creates the merged
// view if needed): activation's selection_environment (launch_plan.h) with the selection's layout, for
// exec, env, script, probe and exports, after checking the programs it hands over
// (check_selection_programs: TrustError).
// `current`: the environment the activation starts from (default: this process's).
std::vector<EnvChange> selection_changes(const Store& store, const Resolved& r,
                                         Layout* layout = nullptr, const EnvLookup& current = {});

// Prints a JSON document on stdout (exactly one per --json command).
void print_json(const nlohmann::json& doc);

// Writes text for a shell to evaluate on stdout, flushed at once (env, hook-env).
void print_text(const std::string& text);

nlohmann::json entry_json(const Store& store, const Entry& e);

// Messages for people: to stderr, "cvm: " prefix.
void note(const std::string& message);

// -q/--quiet (every command has it): no progress and no hints.
bool& quiet_flag();
// A note that only helps (what to run next): left out with --quiet.
void hint(const std::string& message);
// A note that says the command did what it was asked and nothing more (`cvm use`'s "selected
// ..." and host-compiler lines): left out with --quiet, where the exit code says it, as
// `pyenv local` prints nothing.
void report(const std::string& message);
// The one command a user most likely runs next, after a command that changed something:
// "cvm: next: COMMAND (why)" on stderr, so stdout stays clean for scripts; also left out with
// --quiet.
void hint(const std::string& command, const std::string& why);

// Whether to colour what goes to `fd`: a terminal, and NO_COLOR unset or empty (no-color.org).
bool colour_allowed(int fd);

} // namespace cvm::cli
