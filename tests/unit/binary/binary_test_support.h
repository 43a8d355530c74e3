#pragma once
// Helpers for the tests of the binary readers (and of doctor and core, which read binaries):
// running the system compiler to build real ELF shared objects and PE DLLs, reading files back.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.h"

namespace cvm::binary::test {

namespace fs = std::filesystem;

using cvm::test::TempDir;

inline void write_file(const std::string& path, const std::string& content) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path, std::ios::binary);
    out << content;
}

inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
}

inline std::optional<std::string> find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (!path) return std::nullopt;
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (dir.empty()) continue;
        fs::path candidate = fs::path(dir) / name;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) return candidate.string();
    }
    return std::nullopt;
}

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

struct CommandResult {
    int status = -1;
    std::string output;
    bool ok() const { return status == 0; }
};

// Runs a shell command, capturing stdout and stderr together.
inline CommandResult run_command(const std::string& command, const std::string& log_dir) {
    const std::string log = (fs::path(log_dir) / ".cmd.log").string();
    CommandResult r;
    r.status = std::system((command + " >" + shell_quote(log) + " 2>&1").c_str());
    std::ifstream in(log);
    std::stringstream content;
    content << in.rdbuf();
    r.output = command + "\n" + content.str();
    return r;
}

// The C compiler for native ELF objects: $CC, else cc, gcc, clang.
inline std::optional<std::string> c_compiler() {
    if (const char* cc = std::getenv("CC"); cc && *cc) return std::string(cc);
    for (const char* name : {"cc", "gcc", "clang"})
        if (auto p = find_program(name)) return p;
    return std::nullopt;
}

// Compiles a one-function C shared object to `out` with the system compiler; `flags` go to the
// compiler driver (e.g. "-Wl,-soname,libx.so.1 -Wl,--enable-new-dtags -Wl,-rpath,/opt/x").
inline CommandResult build_shared_object(const std::string& compiler, const std::string& out,
                                         const std::string& flags,
                                         const std::string& symbol = "cvm_test_fn") {
    const fs::path dir = fs::path(out).parent_path();
    fs::create_directories(dir);
    const std::string src = (dir / (fs::path(out).filename().string() + ".c")).string();
    write_file(src, "int " + symbol + "(void) { return 42; }\n");
    return run_command(shell_quote(compiler) + " -shared -fPIC -o " + shell_quote(out) + " " +
                           shell_quote(src) + " " + flags,
                       dir.string());
}

} // namespace cvm::binary::test
