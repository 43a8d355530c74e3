#include <catch2/catch.hpp>

#include "activation/environment.h"
#include "store/resolve.h"
#include "test_support.h"

using namespace cvm;
using cvm::test::TempDir;
using cvm::test::write_file;
using platform::Os;

namespace {
std::optional<std::string> value_of(const std::vector<EnvChange>& changes,
                                    const std::string& name) {
    for (const auto& c : changes)
        if (c.name == name) return c.value;
    FAIL("no change for " + name);
    return std::nullopt;
}

Resolved combo(const fs::path& tk, const fs::path& dnn) {
    Resolved r;
    r.toolkit.kind = Kind::Cuda;
    r.toolkit.id = "11.2.2";
    r.toolkit.version = *parse_version("11.2.2");
    r.toolkit.path = tk;
    r.toolkit.bin_dirs = {"bin"};
    r.toolkit.lib_dirs = {"lib64"};
    Entry c;
    c.kind = Kind::Cudnn;
    c.id = "8.1.0.77-cuda11.2";
    c.version = *parse_version("8.1.0.77");
    c.cuda = *parse_version("11.2");
    c.path = dnn;
    c.lib_dirs = {"lib"};
    c.bin_dirs = {"bin"};
    r.cudnn = c;
    return r;
}
} // namespace

TEST_CASE("the environment of a combination (Linux)") {
    TempDir t("env");
    fs::path other = t.path / "cuda-10.2";
    write_file(other / "bin" / "nvcc", "");
    write_file(other / "lib64" / "libcudart.so", "");
    Resolved r = combo("/opt/cuda-11.2", "/opt/cudnn-8.1");
    Layout l = layout_of(r, "/root/views/11.2.2+8.1.0.77-cuda11.2", Os::Linux);
    ForeignDirs rules;
    rules.store_layers = {"/home/u/.local/share/cvm"};
    rules.shims_dir = "/home/u/.local/share/cvm/shims";
    std::string path = "/home/u/.local/share/cvm/shims:" + (other / "bin").string() +
                       ":/usr/bin:/home/u/.local/share/cvm/views/12.4.1+9/bin:/bin";
    auto ch =
        compute_environment(l, path, (other / "lib64").string() + ":/opt/x", rules, Os::Linux);
    CHECK(value_of(ch, "CUDA_PATH") == "/root/views/11.2.2+8.1.0.77-cuda11.2");
    CHECK(value_of(ch, "CUDA_HOME") == "/root/views/11.2.2+8.1.0.77-cuda11.2");
    CHECK(value_of(ch, "CUDA_PATH_V11_2") == "/root/views/11.2.2+8.1.0.77-cuda11.2");
    CHECK(value_of(ch, "CUDNN_PATH") == "/opt/cudnn-8.1");
    // The view's bin leads: nvcc started from there takes the view's folders.
    CHECK(value_of(ch, "PATH") ==
          "/root/views/11.2.2+8.1.0.77-cuda11.2/bin:/home/u/.local/share/cvm/shims:/usr/bin:/bin");
    CHECK(l.tool_dirs == std::vector<fs::path>{"/opt/cuda-11.2/bin"});
    // One folder, the view's, holds the toolkit's libraries and cuDNN's.
    CHECK(value_of(ch, "LD_LIBRARY_PATH") == "/root/views/11.2.2+8.1.0.77-cuda11.2/lib64:/opt/x");
    CHECK(value_of(ch, "CVM_ACTIVE") == "11.2.2+8.1.0.77-cuda11.2");
}

TEST_CASE("system folders stay on PATH even when they hold nvcc") {
    ForeignDirs rules;
    CHECK_FALSE(is_foreign_cuda_dir("/usr/bin", rules, Os::Linux, false));
    CHECK_FALSE(is_foreign_cuda_dir("/usr/lib/x86_64-linux-gnu", rules, Os::Linux, true));
    CHECK_FALSE(is_foreign_cuda_dir("C:\\Windows\\System32", rules, Os::Windows, false));
    CHECK(is_foreign_cuda_dir("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v10.2\\bin",
                              rules, Os::Windows, false));
    CHECK(is_foreign_cuda_dir("c:/program files/nvidia gpu computing toolkit/cuda/v12.4/libnvvp",
                              rules, Os::Windows, false));
}

TEST_CASE("the environment on Windows: cuDNN bin on PATH, no LD_LIBRARY_PATH") {
    Resolved r = combo("C:\\cuda", "C:\\cudnn");
    r.toolkit.lib_dirs = {"lib/x64"};
    Layout l = layout_of(r, "C:\\Users\\u\\AppData\\Local\\cvm\\views\\x", Os::Windows);
    ForeignDirs rules;
    rules.store_layers = {"C:\\Users\\u\\AppData\\Local\\cvm"};
    rules.shims_dir = "C:\\Users\\u\\AppData\\Local\\cvm\\shims";
    rules.probe_filesystem = false;
    auto ch = compute_environment(
        l,
        std::string("C:\\Windows;C:\\Program Files\\NVIDIA GPU Computing "
                    "Toolkit\\CUDA\\v10.2\\bin;C:\\Users\\u\\AppData\\Local\\cvm\\shims"),
        std::nullopt, rules, Os::Windows);
    std::string p = *value_of(ch, "PATH");
    CHECK(p.find("v10.2") == std::string::npos);
    CHECK(p.find("C:\\Windows") != std::string::npos);
    // The view's bin holds the toolkit's programs and cuDNN's DLLs.
    CHECK(p.rfind("C:\\Users\\u\\AppData\\Local\\cvm\\views\\x", 0) == 0);
    CHECK(p.find("C:\\cudnn") == std::string::npos);
    CHECK(l.tool_dirs == std::vector<fs::path>{"C:\\cuda/bin", "C:\\cudnn/bin"});
    for (const auto& c : ch)
        CHECK(c.name != "LD_LIBRARY_PATH");
}

TEST_CASE("a toolkit without cuDNN unsets CUDNN_PATH and uses its own folder") {
    Resolved r = combo("/opt/cuda", "/x");
    r.cudnn.reset();
    Layout l = layout_of(r, "", Os::Linux);
    auto ch =
        compute_environment(l, std::string("/usr/bin"), std::nullopt, ForeignDirs{}, Os::Linux);
    CHECK(value_of(ch, "CUDA_PATH") == "/opt/cuda");
    CHECK_FALSE(value_of(ch, "CUDNN_PATH"));
    CHECK(value_of(ch, "LD_LIBRARY_PATH") == "/opt/cuda/lib64");
    CHECK(value_of(ch, "CVM_ACTIVE") == "11.2.2");
}

TEST_CASE("apply_changes sets and unsets") {
    std::map<std::string, std::string> env{{"CUDNN_PATH", "/old"}, {"HOME", "/h"}};
    apply_changes(env, {{"CUDNN_PATH", std::nullopt}, {"CUDA_PATH", std::string("/c")}}, Os::Linux);
    CHECK(env.count("CUDNN_PATH") == 0);
    CHECK(env["CUDA_PATH"] == "/c");
    CHECK(env["HOME"] == "/h");
}

TEST_CASE("shared system folders are never added, moved or removed") {
    using cvm::is_system_folder;
    for (const char* d :
         {"/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/usr/lib", "/usr/lib64", "/lib",
          "/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/local/lib", "/usr/bin/"})
        CHECK(is_system_folder(d, Os::Linux));
    for (const char* d : {"/usr/lib/nvidia-cuda-toolkit/bin", "/usr/local/cuda-13.0/bin",
                          "/usr/lib/x86_64-linux-gnu/nvidia", "/opt/bin", ""})
        CHECK_FALSE(is_system_folder(d, Os::Linux));
    CHECK(is_system_folder("C:\\Windows", Os::Windows));
    CHECK(is_system_folder("c:/windows/system32/", Os::Windows));
    CHECK_FALSE(is_system_folder("C:\\WindowsApps", Os::Windows));

    // A toolkit registered with the distribution's folders (Debian's /usr) as its bin and lib.
    Resolved r;
    r.toolkit.kind = Kind::Cuda;
    r.toolkit.id = "11.8.89";
    r.toolkit.version = *parse_version("11.8.89");
    r.toolkit.path = "/usr";
    r.toolkit.bin_dirs = {"lib/nvidia-cuda-toolkit/bin", "bin"};
    r.toolkit.lib_dirs = {"lib/x86_64-linux-gnu"};
    Layout l = layout_of(r, {}, Os::Linux);
    ForeignDirs rules;
    rules.store_layers = {"/home/u/.local/share/cvm"};
    rules.shims_dir = "/home/u/.local/share/cvm/shims";
    rules.probe_filesystem = false;
    auto ch = compute_environment(l, std::string("/home/u/bin:/usr/local/bin:/usr/bin:/bin"),
                                  std::string("/opt/x:/usr/lib/x86_64-linux-gnu:/usr/lib"), rules,
                                  Os::Linux);
    // Not prepended, and the current ones stay where they were.
    CHECK(value_of(ch, "PATH") ==
          "/usr/lib/nvidia-cuda-toolkit/bin:/home/u/bin:/usr/local/bin:/usr/bin:/bin");
    CHECK(value_of(ch, "LD_LIBRARY_PATH") == "/opt/x:/usr/lib/x86_64-linux-gnu:/usr/lib");
    // CUDA_HOME=/usr would make build systems take the whole system for a toolkit.
    CHECK_FALSE(value_of(ch, "CUDA_PATH"));
    CHECK_FALSE(value_of(ch, "CUDA_HOME"));
    CHECK_FALSE(value_of(ch, "CUDA_PATH_V11_8"));
    CHECK(value_of(ch, "CVM_ACTIVE") == "11.8.89");

    // Another toolkit's folders keep being removed, even inside a store layer named /usr/local.
    rules.store_layers = {"/usr/local"};
    ch = compute_environment(l, std::string("/usr/local/cuda-12/bin:/usr/local/bin"), std::nullopt,
                             rules, Os::Linux);
    CHECK(value_of(ch, "PATH") == "/usr/lib/nvidia-cuda-toolkit/bin:/usr/local/bin");

    CHECK(is_system_prefix("/usr", Os::Linux));
    CHECK(is_system_prefix("/usr/", Os::Linux));
    CHECK(is_system_prefix("/", Os::Linux));
    CHECK(is_system_prefix("C:\\", Os::Windows));
    CHECK_FALSE(is_system_prefix("/usr/local/cuda-13.0", Os::Linux));
    CHECK_FALSE(is_system_prefix("/usr/lib/nvidia-cuda-toolkit", Os::Linux));
}

TEST_CASE("without a merged view, the toolkit's and cuDNN's library folders are both listed") {
    Resolved r = combo("/opt/cuda-11.2", "/opt/cudnn-8.1");
    Layout l = layout_of(r, "", Os::Linux);
    auto ch =
        compute_environment(l, std::string("/usr/bin"), std::nullopt, ForeignDirs{}, Os::Linux);
    CHECK(value_of(ch, "LD_LIBRARY_PATH") == "/opt/cuda-11.2/lib64:/opt/cudnn-8.1/lib");
    // A toolkit without library folders of its own: the view's lib64 holds cuDNN's.
    r.toolkit.lib_dirs.clear();
    l = layout_of(r, "/v", Os::Linux);
    ch = compute_environment(l, std::string("/usr/bin"), std::nullopt, ForeignDirs{}, Os::Linux);
    CHECK(value_of(ch, "LD_LIBRARY_PATH") == "/v/lib64");
}

namespace {
EnvLookup lookup_of(const std::map<std::string, std::string>& env) {
    return [env](const std::string& n) -> std::optional<std::string> {
        auto it = env.find(n);
        if (it == env.end()) return std::nullopt;
        return it->second;
    };
}
} // namespace

TEST_CASE("what build systems read: CUDACXX, CPATH, LIBRARY_PATH, the cuDNN names, nothing of "
          "another toolkit") {
    TempDir t("envbuild");
    write_file(t.path / "tk" / "bin" / "nvcc", "");
    write_file(t.path / "old" / "lib64" / "stubs" / "libcuda.so", "");
    write_file(t.path / "old" / "include" / "cuda_runtime.h", "");
    write_file(t.path / "driver" / "libcuda.so", ""); // a driver folder (containers) stays
    Resolved r = combo(t.path / "tk", t.path / "dnn");
    r.cudnn->include_dirs = {"include"};
    const fs::path view = t.path / "root" / "views" / "v";
    Layout l = layout_of(r, view, Os::Linux);
    CHECK(l.nvcc == view / "bin" / "nvcc");
    ForeignDirs rules;
    rules.shims_dir = t.path / "root" / "shims";
    std::map<std::string, std::string> env{
        {"PATH", rules.shims_dir.string() + ":/usr/bin"},
        {"LIBRARY_PATH",
         (t.path / "old" / "lib64" / "stubs").string() + ":" + (t.path / "driver").string()},
        {"CPATH", (t.path / "old" / "include").string() + ":/usr/include"},
        {"CUDACXX", "/usr/local/cuda-10.2/bin/nvcc"},
        {"CUDNN_INCLUDE_DIR", "/old/cudnn/include"}};
    auto ch = compute_environment(l, lookup_of(env), rules, Os::Linux);
    CHECK(value_of(ch, "CUDACXX") == (view / "bin" / "nvcc").string());
    CHECK(value_of(ch, "CUDNN_ROOT") == (t.path / "dnn").string());
    CHECK(value_of(ch, "CUDNN_INCLUDE_DIR") == (view / "include").string());
    CHECK(value_of(ch, "CUDNN_LIB_DIR") == (view / "lib64").string());
    CHECK(value_of(ch, "CPATH") == (t.path / "dnn" / "include").string() + ":" +
                                       (view / "include").string() + ":/usr/include");
    CHECK(value_of(ch, "LIBRARY_PATH") ==
          (view / "lib64").string() + ":" + (t.path / "driver").string());
    // No host compiler to hand over: none set, and nothing of cvm's left.
    CHECK_FALSE(value_of(ch, "CUDAHOSTCXX"));
    CHECK_FALSE(value_of(ch, kHostCompilerMark));

    SECTION("the prompt hook keeps the shims first") {
        auto hooked =
            compute_environment(l, lookup_of(env), rules, Os::Linux, PathOrder::AfterShims);
        CHECK(value_of(hooked, "PATH") ==
              rules.shims_dir.string() + ":" + (view / "bin").string() + ":/usr/bin");
    }
    SECTION("a toolkit without cuDNN: no cuDNN variables, and an empty CPATH is unset") {
        r.cudnn.reset();
        Layout alone = layout_of(r, {}, Os::Linux);
        auto c2 = compute_environment(alone, lookup_of({{"CUDNN_ROOT", "/x"}}), rules, Os::Linux);
        CHECK_FALSE(value_of(c2, "CUDNN_ROOT"));
        CHECK_FALSE(value_of(c2, "CUDNN_LIB_DIR"));
        CHECK(value_of(c2, "CPATH") == (t.path / "tk" / "include").string());
    }
    SECTION("the host compiler: handed over unless the user chose one") {
        l.host_compiler = {"/usr/bin/g++-11", false};
        auto c = compute_environment(l, lookup_of(env), rules, Os::Linux);
        CHECK(value_of(c, "CUDAHOSTCXX") == "/usr/bin/g++-11");
        CHECK_FALSE(value_of(c, "NVCC_CCBIN")); // this nvcc does not read it: -ccbin instead
        CHECK(value_of(c, kHostCompilerMark) == "/usr/bin/g++-11");
        l.host_compiler.via_env = true;
        c = compute_environment(l, lookup_of(env), rules, Os::Linux);
        CHECK(value_of(c, "NVCC_CCBIN") == "/usr/bin/g++-11");
        // What cvm set before (another toolkit's choice) is replaced...
        auto before = env;
        before["CUDAHOSTCXX"] = before[kHostCompilerMark] = "/usr/bin/clang++-14";
        c = compute_environment(l, lookup_of(before), rules, Os::Linux);
        CHECK(value_of(c, "CUDAHOSTCXX") == "/usr/bin/g++-11");
        // ...the user's own is kept, and cvm then hands nothing over.
        before[kHostCompilerMark] = "/usr/bin/g++-13";
        c = compute_environment(l, lookup_of(before), rules, Os::Linux);
        for (const auto& x : c)
            CHECK(x.name != "CUDAHOSTCXX");
        CHECK_FALSE(value_of(c, "NVCC_CCBIN"));
        CHECK_FALSE(value_of(c, kHostCompilerMark));
    }
}

TEST_CASE("lib64 that links to lib is one library folder") {
    TempDir t("envlib");
    fs::create_directories(t.path / "tk" / "lib");
    fs::create_directory_symlink("lib", t.path / "tk" / "lib64");
    Resolved r = combo(t.path / "tk", t.path / "dnn");
    r.cudnn.reset();
    r.toolkit.lib_dirs = {"lib64", "lib"};
    Layout l = layout_of(r, {}, Os::Linux);
    CHECK(l.lib_dirs == std::vector<fs::path>{t.path / "tk" / "lib"});
}

TEST_CASE("NCCL: NCCL_HOME and NCCL_ROOT, its library in the view's folder or its own") {
    Resolved r = combo("/opt/cuda-11.2", "/opt/cudnn-8.1");
    r.cudnn.reset();
    Entry n;
    n.kind = Kind::Nccl;
    n.id = "2.8.4-cuda11.2";
    n.version = *parse_version("2.8.4");
    n.cuda = *parse_version("11.2");
    n.path = "/opt/nccl";
    n.lib_dirs = {"lib"};
    n.include_dirs = {"include"};
    r.nccl = n;
    Layout l = layout_of(r, "/v", Os::Linux);
    auto ch =
        compute_environment(l, std::string("/usr/bin"), std::nullopt, ForeignDirs{}, Os::Linux);
    CHECK(value_of(ch, "NCCL_HOME") == "/opt/nccl");
    CHECK(value_of(ch, "NCCL_ROOT") == "/opt/nccl");
    // What a build's FindNCCL reads: the view's folders, which hold libnccl.so too.
    CHECK(value_of(ch, "NCCL_INCLUDE_DIR") == "/v/include");
    CHECK(value_of(ch, "NCCL_LIB_DIR") == "/v/lib64");
    CHECK(value_of(ch, "CUDA_HOME") == "/v");
    CHECK(value_of(ch, "LD_LIBRARY_PATH") == "/v/lib64");
    CHECK(value_of(ch, "LIBRARY_PATH") == "/v/lib64");
    CHECK(value_of(ch, "CPATH") == "/opt/nccl/include:/v/include"); // its own first
    CHECK(value_of(ch, "CVM_ACTIVE") == "11.2.2+nccl2.8.4-cuda11.2");
    CHECK_FALSE(value_of(ch, "CUDNN_PATH"));
    // Without a view (an NCCL inside the toolkit's own folder), its folder is listed.
    l = layout_of(r, "", Os::Linux);
    ch = compute_environment(l, std::string("/usr/bin"), std::nullopt, ForeignDirs{}, Os::Linux);
    CHECK(value_of(ch, "LD_LIBRARY_PATH") == "/opt/cuda-11.2/lib64:/opt/nccl/lib");
    CHECK(value_of(ch, "NCCL_INCLUDE_DIR") == "/opt/nccl/include");
    CHECK(value_of(ch, "NCCL_LIB_DIR") == "/opt/nccl/lib");
    // Without an NCCL, a user's own NCCL_HOME is not touched.
    r.nccl.reset();
    ch = compute_environment(layout_of(r, "", Os::Linux), std::string("/usr/bin"), std::nullopt,
                             ForeignDirs{}, Os::Linux);
    for (const auto& c : ch) {
        CHECK(c.name != "NCCL_HOME");
        CHECK(c.name != "NCCL_ROOT");
        CHECK(c.name.rfind("NCCL_", 0) != 0);
    }
}
