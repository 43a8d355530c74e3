#include "doctor/windows_loader.h"

#include "binary/binary_test_support.h"
#include "binary/pe_reader.h"

#include <catch2/catch.hpp>

using namespace cvm::doctor;
using namespace cvm::binary;
using namespace cvm::binary::test;

namespace {

// Builds a real x64 DLL with mingw-w64 (nullopt when the toolchain is missing).
std::optional<std::string> build_dll(const TempDir& t, const std::string& prefix,
                                     const std::string& name) {
    if (!find_program(prefix + "-gcc")) return std::nullopt;
    const std::string dir = t.mkdir("build-" + prefix).string();
    write_file(dir + "/x.c", "__declspec(dllexport) int cudnnGetVersion(void) { return 8100; }\n");
    auto r = run_command("cd " + shell_quote(dir) + " && " + shell_quote(prefix + "-gcc") +
                             " -shared -o " + shell_quote(name) + " x.c",
                         dir);
    INFO(r.output);
    REQUIRE(r.ok());
    return dir + "/" + name;
}

struct Machine {
    TempDir t;
    std::string dll;
    WindowsSearchConfig config;
    std::string app, system32, system16, windows, cwd, path1, path2, torch_lib, site;

    explicit Machine(std::string built) : dll(std::move(built)) {
        app = t.mkdir("Python310").string();
        windows = t.mkdir("Windows").string();
        system32 = t.mkdir("Windows/System32").string();
        system16 = t.mkdir("Windows/System").string();
        cwd = t.mkdir("Users/me/project").string();
        path1 = t.mkdir("CUDA/v11.2/bin").string();
        path2 = t.mkdir("CUDA/v12.4/bin").string();
        torch_lib = t.mkdir("Python310/Lib/site-packages/torch/lib").string();
        site = t.mkdir("Python310/Lib/site-packages/tensorflow/python").string();
        config.application_dir = app;
        config.system32_dir = system32;
        config.system16_dir = system16;
        config.windows_dir = windows;
        config.current_dir = cwd;
        config.path = path1 + ";" + path2;
        config.machine = pe::machine_amd64;
    }
    void put(const std::string& dir, const std::string& name = "cudnn64_8.dll") const {
        fs::copy_file(dll, dir + "/" + name, fs::copy_options::overwrite_existing);
    }
};

} // namespace

TEST_CASE("Windows loader: the standard search order", "[doctor][winloader]") {
    TempDir build;
    auto dll = build_dll(build, "x86_64-w64-mingw32", "cudnn64_8.dll");
    if (!dll) {
        WARN("x86_64-w64-mingw32-gcc missing (apt-get install mingw-w64): skipping");
        return;
    }
    Machine m(*dll);
    RealFileSystem fs;
    m.put(m.path1);
    m.put(m.path2);

    SECTION("the first PATH folder wins, the second is shadowed") {
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->path == m.path1 + "/cudnn64_8.dll");
        CHECK(r.selected()->mechanism == WindowsMechanism::path_env);
        CHECK(r.selected()->origin == "PATH entry 1");
        REQUIRE(r.shadowed().size() == 1);
        CHECK(r.shadowed()[0]->path == m.path2 + "/cudnn64_8.dll");
        // Searched before PATH: application, System32, System, Windows, current folder.
        REQUIRE(r.candidates.size() == 7);
        CHECK(r.candidates[0].mechanism == WindowsMechanism::application_dir);
        CHECK(r.candidates[1].mechanism == WindowsMechanism::system32);
        CHECK(r.candidates[2].mechanism == WindowsMechanism::system16);
        CHECK(r.candidates[3].mechanism == WindowsMechanism::windows_dir);
        CHECK(r.candidates[4].mechanism == WindowsMechanism::current_dir);
    }
    SECTION("a copy in the current folder beats PATH; System32 beats the current folder") {
        m.put(m.cwd);
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == WindowsMechanism::current_dir);
        CHECK(r.shadowed().size() == 2);
        m.put(m.system32);
        auto r2 = search_windows_dll("cudnn64_8.dll", m.config, fs);
        CHECK(r2.selected()->mechanism == WindowsMechanism::system32);
        CHECK(r2.shadowed().size() == 3);
    }
    SECTION("with SafeDllSearchMode off the current folder comes before System32") {
        m.put(m.cwd);
        m.put(m.system32);
        m.config.mode = WindowsSearchMode::standard_unsafe;
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == WindowsMechanism::current_dir);
    }
    SECTION("names compare case-insensitively and keep the spelling on disk") {
        fs::remove(m.path1 + "/cudnn64_8.dll");
        m.put(m.path1, "CUDNN64_8.DLL");
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->path == m.path1 + "/CUDNN64_8.DLL");
    }
    SECTION("quoted PATH entries and empty ones") {
        m.config.path = ";\"" + m.path2 + "\";;" + m.path1;
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->path == m.path2 + "/cudnn64_8.dll");
    }
    SECTION("a missing sub-library: every folder is listed, none wins") {
        auto r = search_windows_dll("cudnn_ops_infer64_8.dll", m.config, fs);
        CHECK_FALSE(r.selected());
        CHECK(r.candidates.size() == 7);
    }
    SECTION("a file that is not a DLL stops LoadLibrary") {
        write_file(m.cwd + "/cudnn64_8.dll", "not a dll");
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        CHECK_FALSE(r.selected());
        REQUIRE(r.failed_at);
        CHECK(r.candidates[*r.failed_at].mechanism == WindowsMechanism::current_dir);
        CHECK(r.shadowed().size() == 2);
    }
}

TEST_CASE("Windows loader: Python 3.8+ extension modules ignore PATH", "[doctor][winloader]") {
    TempDir build;
    auto dll = build_dll(build, "x86_64-w64-mingw32", "cudnn64_8.dll");
    if (!dll) {
        WARN("x86_64-w64-mingw32-gcc missing: skipping");
        return;
    }
    Machine m(*dll);
    RealFileSystem fs;
    m.put(m.path1);
    m.config.mode = WindowsSearchMode::python_extension;
    m.config.loading_module_dir = m.site;

    SECTION("a cuDNN only on PATH is not found") {
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        CHECK_FALSE(r.selected());
        for (const auto& c : r.candidates)
            CHECK(c.mechanism != WindowsMechanism::path_env);
        CHECK(r.candidates.size() == 3); // module folder, application folder, System32
    }
    SECTION("os.add_dll_directory makes it visible") {
        m.config.dll_directories = {m.path1};
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == WindowsMechanism::user_dir);
    }
    SECTION("the extension module's own folder comes first (a framework's bundled cuDNN)") {
        m.config.loading_module_dir = m.torch_lib;
        m.put(m.torch_lib);
        m.config.dll_directories = {m.path1};
        auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
        REQUIRE(r.selected());
        CHECK(r.selected()->mechanism == WindowsMechanism::dll_load_dir);
        CHECK(r.shadowed().size() == 1);
    }
}

TEST_CASE("Windows loader: a DLL of another machine makes LoadLibrary fail",
          "[doctor][winloader]") {
    TempDir build;
    auto dll64 = build_dll(build, "x86_64-w64-mingw32", "cudnn64_8.dll");
    auto dll32 = build_dll(build, "i686-w64-mingw32", "cudnn64_8.dll");
    if (!dll64 || !dll32) {
        WARN("mingw-w64 (x86_64 and i686) missing: skipping");
        return;
    }
    Machine m(*dll64);
    RealFileSystem fs;
    fs::copy_file(*dll32, m.path1 + "/cudnn64_8.dll");
    m.put(m.path2);
    auto r = search_windows_dll("cudnn64_8.dll", m.config, fs);
    CHECK_FALSE(r.selected());
    REQUIRE(r.failed_at);
    CHECK(r.candidates[*r.failed_at].detail.find("x86") != std::string::npos);
}

TEST_CASE("Windows PATH splitting", "[doctor][winloader]") {
    CHECK(split_windows_path("C:\\a;;\"C:\\Program Files\\x;y\";C:\\b") ==
          std::vector<std::string>{"C:\\a", "C:\\Program Files\\x;y", "C:\\b"});
    CHECK(split_windows_path("").empty());
    CHECK(iequals("cuDNN64_8.DLL", "cudnn64_8.dll"));
    CHECK_FALSE(iequals("cudnn64_8.dll", "cudnn64_9.dll"));
    CHECK(path_join("C:\\Windows", "System32") == "C:\\Windows\\System32");
    CHECK(path_join("/usr/lib/", "libx.so") == "/usr/lib/libx.so");
    CHECK(path_dirname("C:\\Windows\\System32\\x.dll") == "C:\\Windows\\System32");
    CHECK(path_dirname("C:\\x.dll") == "C:\\");
    CHECK(path_dirname("/x") == "/");
    CHECK(path_dirname("x") == ".");
    CHECK(path_basename("/usr/lib/libcudnn.so.8") == "libcudnn.so.8");
}
