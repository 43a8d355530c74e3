#pragma once
// Helpers shared by the install unit tests: errors, fixtures (the temporary folder,
// files, shell commands and the registry are test_support.h's, test_commands.h's and
// registry_support.h's).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "install/error.h"
#include "registry_support.h"
#include "test_commands.h"
#include "test_support.h"

namespace cvm::install::test {

namespace fs = std::filesystem;

using cvm::test::read_file;
using cvm::test::real_registry;
using cvm::test::repo_root;
using cvm::test::shell;
using cvm::test::shell_quote;
using cvm::test::TempDir;
using cvm::test::write_file;

// The message of the InstallError that `f` throws; "(no error)" when it throws none.
inline std::string install_error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InstallError& e) {
        return e.what();
    }
    return "(no error)";
}

inline fs::path redist_fixtures() {
    if (const char* env = std::getenv("CVM_FIXTURES_DIR")) return fs::path(env) / "redist";
    fs::path fixtures = repo_root() / "tests" / "fixtures" / "redist";
    if (fs::is_directory(fixtures)) return fixtures;
    FAIL(fixtures.string() + " not found; set CVM_FIXTURES_DIR");
    return {};
}

} // namespace cvm::install::test
