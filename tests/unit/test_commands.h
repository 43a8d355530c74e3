#pragma once
// Shell commands for the unit tests that run programs (POSIX sh): quoting, looking a program up on
// PATH, running a command for its exit status or its output.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

namespace cvm::test {

// `s` as one word of a POSIX shell command: in single quotes, any ' written '\''.
inline std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out.push_back(c);
    }
    return out + "'";
}

// The file `name` in the first folder of PATH that holds it.
inline std::optional<std::string> find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (!path) return std::nullopt;
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (dir.empty()) continue;
        std::filesystem::path candidate = std::filesystem::path(dir) / name;
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
    }
    return std::nullopt;
}

// Runs a shell command. Returns its exit status (-1 when no shell could run it).
inline int shell(const std::string& command) {
    int rc = std::system(command.c_str());
    if (rc == -1) return -1;
    return WEXITSTATUS(rc);
}

struct CommandResult {
    int status = -1;
    std::string output;
    bool ok() const { return status == 0; }
};

// Runs a shell command, capturing stdout and stderr together (in log_dir/.cmd.log); the output
// starts with the command's line.
inline CommandResult run_command(const std::string& command, const std::string& log_dir) {
    const std::string log = (std::filesystem::path(log_dir) / ".cmd.log").string();
    CommandResult r;
    r.status = std::system((command + " >" + shell_quote(log) + " 2>&1").c_str());
    std::ifstream in(log);
    std::stringstream content;
    content << in.rdbuf();
    r.output = command + "\n" + content.str();
    return r;
}

} // namespace cvm::test
