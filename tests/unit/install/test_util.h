#pragma once
// Helpers shared by the install unit tests: files, fixtures (the temporary folder is
// test_support.h's).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "install/error.h"
#include "registry/registry.h"
#include "test_support.h"

namespace cvm::install::test {

namespace fs = std::filesystem;

// The message of the InstallError that `f` throws; "(no error)" when it throws none.
inline std::string install_error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InstallError& e) {
        return e.what();
    }
    return "(no error)";
}

inline fs::path repo_root() {
#ifdef CVM_SOURCE_DIR
    return fs::path(CVM_SOURCE_DIR); // __FILE__ is relative when ccache's base_dir is set
#else
    // This file lives in <repo>/tests/unit/install/.
    return fs::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
#endif
}

// The registry of the source tree (registry/), loaded once.
inline const registry::Registry& real_registry() {
    static const registry::Registry reg = registry::load_registry(registry::source_tree_registry_dir());
    return reg;
}

inline fs::path redist_fixtures() {
    if (const char* env = std::getenv("CVM_FIXTURES_DIR")) return fs::path(env) / "redist";
    fs::path fixtures = repo_root() / "tests" / "fixtures" / "redist";
    if (fs::is_directory(fixtures)) return fixtures;
    FAIL(fixtures.string() + " not found; set CVM_FIXTURES_DIR");
    return {};
}

inline std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

inline void write_text(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
    REQUIRE(out.good());
}

using cvm::test::TempDir;

// Runs a shell command (tests only; POSIX sh). Returns the exit status.
inline int shell(const std::string& command) {
    int rc = std::system(command.c_str());
    if (rc == -1) return -1;
    return WEXITSTATUS(rc);
}

inline std::string quote(const fs::path& p) {
    std::string s = p.string(), out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

} // namespace cvm::install::test
