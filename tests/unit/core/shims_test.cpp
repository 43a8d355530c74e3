#include <catch2/catch.hpp>

#include "activation/launch_plan.h"
#include "activation/shims.h"
#include "test_support.h"

#include <sys/stat.h>

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;

TEST_CASE("host compilers and friends never get a shim") {
    for (const char* name : {"gcc", "g++", "cc", "c++", "cpp", "clang", "clang++", "clang-17", "clang-cl",
                             "cl", "cl.exe", "CL.EXE", "ld", "ld.gold", "link.exe", "gcc-12", "g++-12",
                             "x86_64-linux-gnu-gcc", "x86_64-linux-gnu-g++-12", "python3", "sh", "make"})
        CHECK(is_host_program(name));
    for (const char* name : {"nvcc", "nvcc.exe", "ptxas", "cicc", "nvlink", "fatbinary", "cuobjdump",
                             "nvdisasm", "cu++filt", "cudafe++", "bin2c", "compute-sanitizer", "cuda-gdb",
                             "nvprune", "ncu", "nsys", "nvprof", "cuda-memcheck"})
        CHECK_FALSE(is_host_program(name));
}

TEST_CASE("the shim's depth marker counts only for the process it was set for") {
    CHECK(shim_depth(std::nullopt, 42) == 0);
    CHECK(shim_depth(std::string("3:42"), 42) == 3);
    CHECK(shim_depth(std::string("3:4"), 42) == 0); // a program started by the tool
    CHECK(shim_depth(std::string("x:42"), 42) == 0);
    CHECK(shim_depth(std::string(":42"), 42) == 0);
    CHECK(shim_depth(std::string(""), 42) == 0);
}

TEST_CASE("fall-through skips the shims folder, the launcher and what is not a regular executable") {
    TempDir t("fall");
    fs::path shims = t.path / "shims", a = t.path / "a", b = t.path / "b", c = t.path / "c";
    write_file(t.path / "launcher", "#!/bin/sh\n");
    fs::permissions(t.path / "launcher", fs::perms::owner_all);
    fs::create_directories(shims);
    fs::create_symlink(t.path / "launcher", shims / "tool");
    fs::create_directories(a);
    fs::create_symlink(t.path / "launcher", a / "tool");         // a link to the launcher elsewhere
    fs::create_directories(b / "tool");                          // a folder of that name
    write_file(c / "tool", "#!/bin/sh\n");                        // not executable yet
    std::string path = shims.string() + "::" + a.string() + ":" + b.string() + ":" + c.string();
    auto self = platform::file_id(t.path / "launcher");
    CHECK(find_system_tool("tool", path, shims, self).empty());
    fs::permissions(c / "tool", fs::perms::owner_all);
    CHECK(find_system_tool("tool", path, shims, self) == c / "tool");
    // The shims folder under another spelling is still the shims folder.
    write_file(shims / "other", "#!/bin/sh\n");
    fs::permissions(shims / "other", fs::perms::owner_all);
    CHECK(find_system_tool("other", (t.path / "x" / ".." / "shims").string() + "/", shims, self).empty());
    fs::create_directories(t.path / "x");
    CHECK(find_system_tool("other", (t.path / "x" / ".." / "shims").string(), shims, self).empty());
}

TEST_CASE("toolkit_tools lists CUDA programs only and flags a system bin folder") {
    TempDir t("tools");
    fs::path tk = t.path / "tk";
    for (const char* n : {"nvcc", "ptxas", "gcc", "g++", "cicc"}) {
        write_file(tk / "bin" / n, "#!/bin/sh\n");
        fs::permissions(tk / "bin" / n, fs::perms::owner_all);
    }
    fs::path root = t.path / "root";
    write_file(root / "cuda" / "11.8.89" / "entry",
               "kind=cuda\nid=11.8.89\nversion=11.8.89\npath=" + tk.string() +
                   "\nsource=imported\nbin=bin\nlib=lib64\ninclude=include\n");
    write_file(root / "cuda" / "12.0.0" / "entry",
               "kind=cuda\nid=12.0.0\nversion=12.0.0\npath=/usr\nsource=imported\nbin=bin\nlib=lib\ninclude=include\n");
    Store store({root});
    ToolkitTools found = toolkit_tools(store);
    CHECK(found.names == std::vector<std::string>{"cicc", "nvcc", "ptxas"});
    REQUIRE(found.warnings.size() == 1);
    CHECK(found.warnings[0].find("12.0.0") != std::string::npos);
    CHECK(found.warnings[0].find("/usr/bin") != std::string::npos);
    CHECK(found.warnings[0].find("cvm uninstall 12.0.0") != std::string::npos);
    CHECK(toolkits_with(store, "cicc") == std::vector<std::string>{"11.8.89"});
    CHECK(toolkits_with(store, "ls").empty()); // /usr/bin is never searched
    CHECK(toolkits_with(store, "gcc").empty());
}

// The name a shim was started by, or `cvm which` was given, as the launch plan takes it: one rule
// for both (launch_plan.h), so `NVCC`, `Nvcc.Exe` and `nvcc.exe` are one tool on Windows.
TEST_CASE("tool_name: the file the plan looks for and the name its lines give") {
    struct Row {
        const char* typed;
        cvm::platform::Os os;
        const char* file;
        const char* shown;
    };
    using cvm::platform::Os;
    const Row rows[] = {
        {"nvcc", Os::Linux, "nvcc", "nvcc"},
        {"/home/u/.local/share/cvm/shims/nvcc", Os::Linux, "nvcc", "nvcc"},
        {"NVCC", Os::Linux, "NVCC", "NVCC"}, // Linux names are case-sensitive
        {"tool.exe", Os::Linux, "tool.exe", "tool.exe"},
        {"NVCC", Os::Windows, "nvcc.exe", "nvcc"},
        {"Nvcc.Exe", Os::Windows, "nvcc.exe", "nvcc"},
        {"nvcc.exe", Os::Windows, "nvcc.exe", "nvcc"},
        {"exe", Os::Windows, "exe.exe", "exe"},
    };
    for (const auto& row : rows) {
        INFO(row.typed);
        auto t = cvm::tool_name(row.typed, row.os);
        CHECK(t.file == row.file);
        CHECK(t.shown == row.shown);
    }
}
