#pragma once
// Helpers for the tests of the binary readers (and of doctor and core, which read binaries):
// running the system compiler to build real ELF shared objects and PE DLLs, reading them back.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "binary/elf_reader.h"
#include "test_commands.h"
#include "test_support.h"

namespace cvm::binary::test {

namespace fs = std::filesystem;

using cvm::test::CommandResult;
using cvm::test::find_program;
using cvm::test::run_command;
using cvm::test::shell_quote;
using cvm::test::TempDir;
using cvm::test::write_file;

// The bytes of the file `path`, as the binary readers take them.
inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
    const std::string bytes = cvm::test::read_file(path);
    return std::vector<std::uint8_t>(bytes.begin(), bytes.end());
}

// The ELF class and machine of this test program: what the system loader here takes.
inline ElfInfo host_abi() {
    auto self = read_elf_file("/proc/self/exe");
    REQUIRE(self);
    return *self.info;
}

// ldconfig on PATH, else where distributions keep it.
inline std::optional<std::string> find_ldconfig() {
    if (auto p = find_program("ldconfig")) return p;
    for (const char* p : {"/sbin/ldconfig", "/usr/sbin/ldconfig"})
        if (fs::exists(p)) return std::string(p);
    return std::nullopt;
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
