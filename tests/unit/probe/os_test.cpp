#include "os.h"
#include "probe.h"
#include "test_support.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

namespace os = cvm::probe::os;

TEST_CASE("a system library opens by bare name and its path is real", "[probe][os]") {
    std::string error;
    auto handle = os::open_library("libm.so.6", error);
    REQUIRE(handle != nullptr);
    CHECK(error.empty());
    CHECK(os::find_symbol(handle, "cos") != nullptr);
    CHECK(os::find_symbol(handle, "no_such_function_cvm") == nullptr);
    std::string path = os::library_path(handle, "cos");
    CHECK(std::filesystem::exists(path));
    CHECK(std::filesystem::path(path).is_absolute());
    CHECK_FALSE(std::filesystem::is_symlink(path));

    bool listed = false;
    for (const auto& m : os::loaded_modules())
        if (m.real_path == path) listed = true;
    CHECK(listed);
}

TEST_CASE("a missing library fails with the loader's message", "[probe][os]") {
    std::string error;
    CHECK(os::open_library("libcvm_does_not_exist.so.42", error) == nullptr);
    CHECK(error.find("libcvm_does_not_exist.so.42") != std::string::npos);
}

TEST_CASE("search folders list LD_LIBRARY_PATH first, then the cache and defaults", "[probe][os]") {
    auto dir = std::filesystem::temp_directory_path();
    std::string saved = std::getenv("LD_LIBRARY_PATH") ? std::getenv("LD_LIBRARY_PATH") : "";
    setenv("LD_LIBRARY_PATH", (dir.string() + ":/cvm/no/such/dir").c_str(), 1);
    auto folders = os::library_search_folders();
    if (saved.empty())
        unsetenv("LD_LIBRARY_PATH");
    else
        setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
    REQUIRE(folders.size() >= 3);
    CHECK(folders[0].path == dir.string());
    CHECK(folders[0].origin == "LD_LIBRARY_PATH");
    CHECK(folders[1].path == "/cvm/no/such/dir");
    CHECK(folders[1].origin == "LD_LIBRARY_PATH, missing");
    bool cache = false, defaults = false;
    for (const auto& f : folders) {
        if (f.path == "/etc/ld.so.cache") cache = true;
        if (f.origin == "system default") defaults = true;
    }
    CHECK(cache);
    CHECK(defaults);
}

TEST_CASE("candidate names cover cuDNN 7 to 9 and CUDA 10 to 13", "[probe][os]") {
    auto cudnn = os::cudnn_names(-1);
    CHECK(cudnn == std::vector<std::string>{"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so.7"});
    CHECK(os::cudnn_names(8) == std::vector<std::string>{"libcudnn.so.8"});
    auto cudart = os::cudart_names(-1);
    CHECK(cudart.front() == "libcudart.so.13");
    CHECK(cudart.back() == "libcudart.so");
    CHECK(os::cudart_names(11) == std::vector<std::string>{"libcudart.so.11.0"});
    CHECK(os::cudart_names(10).size() == 3);
}

TEST_CASE("CUDA module names are recognised", "[probe][os]") {
    CHECK(os::is_cuda_module_name("/usr/lib/libcudnn_cnn.so.9"));
    CHECK(os::is_cuda_module_name("libcudart.so.13"));
    CHECK(os::is_cuda_module_name("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
    CHECK(os::is_cuda_module_name("libnvrtc.so.13"));
    CHECK_FALSE(os::is_cuda_module_name("/usr/lib/libcurl.so.4"));
    CHECK_FALSE(os::is_cuda_module_name("/lib/libc.so.6"));
    CHECK(os::is_cudnn_module_name("/x/libcudnn_graph.so.9"));
    CHECK_FALSE(os::is_cudnn_module_name("/x/libcudart.so.13"));
}

TEST_CASE("arguments parse; bad ones are usage errors", "[probe][args]") {
    using cvm::probe::parse_arguments;
    auto a = parse_arguments({"--json", "--benchmark", "--cudnn-major", "8", "--device=1"});
    CHECK(a.error.empty());
    CHECK(a.options.json);
    CHECK(a.options.benchmark);
    CHECK(a.options.cudnn_major == 8);
    CHECK(a.options.device == 1);
    CHECK(parse_arguments({"--cudart-major=12"}).options.cudart_major == 12);
    CHECK(parse_arguments({"--help"}).help);
    CHECK_FALSE(parse_arguments({"--frobnicate"}).error.empty());
    CHECK_FALSE(parse_arguments({"--cudnn-major"}).error.empty());
    CHECK_FALSE(parse_arguments({"--cudnn-major", "x9"}).error.empty());
    CHECK_FALSE(parse_arguments({"--cudnn-major", "0"}).error.empty());
    CHECK_FALSE(parse_arguments({"--device", "-1"}).error.empty());
}

TEST_CASE("expected folders parse and repeat", "[probe][args]") {
    using cvm::probe::parse_arguments;
    auto a = parse_arguments(
        {"--expect-cudnn-dir", "/a", "--expect-cudnn-dir=/b", "--expect-cudart-dir", "/c"});
    CHECK(a.error.empty());
    CHECK(a.options.expect_cudnn_dirs == std::vector<std::string>{"/a", "/b"});
    CHECK(a.options.expect_cudart_dirs == std::vector<std::string>{"/c"});
    CHECK_FALSE(parse_arguments({"--expect-cudnn-dir"}).error.empty());
    CHECK_FALSE(parse_arguments({"--expect-cudnn-dir="}).error.empty());
    CHECK(parse_arguments({"--expect-cudnn-version", "9.19.0.56"}).options.expect_cudnn_version == "9.19.0.56");
    CHECK(parse_arguments({"--expect-cudnn-version=8.1"}).options.expect_cudnn_version == "8.1");
    for (auto bad : {"--expect-cudnn-version", "--expect-cudnn-version=", "--expect-cudnn-version=9..1",
                     "--expect-cudnn-version=9.1.", "--expect-cudnn-version=v9"})
        CHECK_FALSE(parse_arguments({bad}).error.empty());
}

TEST_CASE("folders compare after resolving links", "[probe][os]") {
    namespace fs = std::filesystem;
    cvm::test::TempDir tmp("probe-os");
    const fs::path& base = tmp.path;
    fs::create_directories(base / "real");
    fs::create_directory_symlink(base / "real", base / "link");
    CHECK(os::same_folder((base / "real").string(), (base / "link").string()));
    CHECK(os::same_folder((base / "real").string(), (base / "real/.").string()));
    CHECK_FALSE(os::same_folder((base / "real").string(), base.string()));
    CHECK(os::is_cudart_module_name("/x/libcudart.so.12"));
    CHECK_FALSE(os::is_cudart_module_name("/x/libcudnn.so.9"));
}
