// The CUDA major read from a cuDNN's libraries, on real ELF files (and PE files when mingw-w64 is
// installed) built here, and on the real cuDNN of /usr/local/cuda-13.0 where it is installed.
#include <catch2/catch.hpp>

#include "binary/binary_test_support.h"
#include "layouts/cudnn_cuda_major.h"
#include "layouts/cudnn_layouts.h"
#include "test_support.h"

using namespace cvm;
using cvm::binary::test::c_compiler;
using cvm::binary::test::find_program;
using cvm::binary::test::run_command;
using cvm::binary::test::shell_quote;
using cvm::test::cudnn_version_header;
using cvm::test::TempDir;
using cvm::test::write_file;

namespace {

// Compiles `source` (C) into the shared library `out` with `compiler`; `flags` follow the source.
void build(const std::string& compiler, const fs::path& out, const std::string& source,
           const std::string& flags = "", const std::string& pic = "-fPIC") {
    fs::create_directories(out.parent_path());
    fs::path src = out.parent_path() / (out.filename().string() + ".c");
    write_file(src, source);
    auto r =
        run_command("cd " + shell_quote(out.parent_path().string()) + " && " +
                        shell_quote(compiler) + " -shared " + pic + " -o " +
                        shell_quote(out.string()) + " " + shell_quote(src.string()) + " " + flags,
                    out.parent_path().string());
    INFO(r.output);
    REQUIRE(r.ok());
    fs::remove(src);
}

// A cuDNN 9 sub-library: keeps the names it would dlopen in its read-only data, beside messages
// that mention cuBLAS without naming a library, and nvrtc's pattern.
std::string loads(const std::string& name) {
    return "const char* cvm_loads = \"" + name +
           "\";\n"
           "const char* cvm_pattern = \"libnvrtc.so.%d\";\n"
           "const char* cvm_message = \"cublasLt has a bug with drelu for cublas versions < 12\";\n"
           "int cvm_fn(void) { return 1; }\n";
}
const char* plain_lib_source = "int cvm_fn(void) { return 1; }\n";

// NVIDIA's RPM packages of cuDNN 9.1.0 under <root>/usr whose sub-libraries load `cublas_lt`
// ("" for none) and `nvrtc`.
fs::path make_rpm_cudnn(const std::string& cc, const fs::path& root, const std::string& cublas_lt,
                        const std::string& nvrtc) {
    fs::path usr = root / "usr";
    write_file(usr / "include" / "cudnn.h", "#include <cudnn_version.h>\n");
    write_file(usr / "include" / "cudnn_version.h", cudnn_version_header(9, 1, 0));
    fs::path lib = usr / "lib64";
    build(cc, lib / "libcudnn.so.9.1.0", plain_lib_source);
    build(cc, lib / "libcudnn_adv.so.9.1.0", cublas_lt.empty() ? plain_lib_source : loads(cublas_lt));
    build(cc, lib / "libcudnn_engines_precompiled.so.9.1.0", nvrtc.empty() ? plain_lib_source : loads(nvrtc));
    for (const char* sub : {"", "_adv", "_engines_precompiled"}) {
        std::string base = std::string("libcudnn") + sub + ".so";
        fs::create_symlink(base + ".9.1.0", lib / (base + ".9"));
    }
    write_file(lib / "libm.so.6", "not cuDNN");
    return usr;
}

} // namespace

TEST_CASE("CUDA library names and the major they stand for", "[cudnn_cuda_major]") {
    CHECK(cuda_major_of_library_name("libcublasLt.so.12") == 12u);
    CHECK(cuda_major_of_library_name("libcublas.so.13") == 13u);
    CHECK(cuda_major_of_library_name("libcublas.so.10.0") == 10u);
    CHECK(cuda_major_of_library_name("libnvrtc.so.11.2") == 11u);
    CHECK(cuda_major_of_library_name("libcudart.so.11.0") == 11u);
    CHECK(cuda_major_of_library_name("cublasLt64_12.dll") == 12u);
    CHECK(cuda_major_of_library_name("CUBLAS64_11.DLL") == 11u);
    CHECK(cuda_major_of_library_name("cublas64_100.dll") == 10u);
    CHECK(cuda_major_of_library_name("cudart64_110.dll") == 11u);
    CHECK(cuda_major_of_library_name("cudart64_101.dll") == 10u);
    CHECK(cuda_major_of_library_name("cudart64_92.dll") == 9u);
    CHECK(cuda_major_of_library_name("nvrtc64_112_0.dll") == 11u);
    CHECK(cuda_major_of_library_name("nvrtc64_120_0.dll") == 12u);
    for (const char* other :
         {"libcuda.so.1", "libnvrtc.so", "libnvrtc.so.%d", "libcublasLt.so", "libcudnn.so.9",
          "libcublas.so.1", "cublas.dll", "xlibcublas.so.12", "libcublas.so.12x", "nvcuda.dll"})
        CHECK_FALSE(cuda_major_of_library_name(other));
}

TEST_CASE("Real ELF libraries: DT_NEEDED (cuDNN 8) and names kept to load (cuDNN 9)",
          "[cudnn_cuda_major]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    TempDir t("cmajor-elf");
    // cuDNN 8's libcudnn_ops_infer links cuBLAS and cuBLASLt of its CUDA.
    build(*cc, t.path / "stubs" / "libcublas.so.11", plain_lib_source, "-Wl,-soname,libcublas.so.11");
    build(*cc, t.path / "stubs" / "libcublasLt.so.11", plain_lib_source, "-Wl,-soname,libcublasLt.so.11");
    fs::path ops = t.path / "lib" / "libcudnn_ops_infer.so.8.9.7";
    build(*cc, ops, plain_lib_source,
          "-Wl,--no-as-needed -L" + shell_quote((t.path / "stubs").string()) +
              " -l:libcublas.so.11 -l:libcublasLt.so.11");
    CHECK(cuda_libraries_named_by(ops) ==
          std::vector<std::string>{"libcublas.so.11", "libcublasLt.so.11"});

    fs::path adv = t.path / "lib" / "libcudnn_adv.so.9.1.0";
    build(*cc, adv, loads("libcublasLt.so.13"));
    CHECK(cuda_libraries_named_by(adv) == std::vector<std::string>{"libcublasLt.so.13"});
    fs::path graph = t.path / "lib" / "libcudnn_graph.so.9.1.0";
    build(*cc, graph, plain_lib_source);
    CHECK(cuda_libraries_named_by(graph).empty());

    auto agree = cuda_major_of_libraries({adv, graph, t.path / "lib" / "missing.so.9"});
    CHECK(agree.major == 13u);
    CHECK(agree.disagreement.empty());
    CHECK(agree.because() == "libcudnn_adv.so.9.1.0 names libcublasLt.so.13");

    auto mixed = cuda_major_of_libraries({ops, adv});
    CHECK_FALSE(mixed.major);
    CHECK(mixed.disagreement ==
          "libcudnn_ops_infer.so.8.9.7 names libcublas.so.11 but libcudnn_adv.so.9.1.0 names "
          "libcublasLt.so.13");
    CHECK_FALSE(cuda_major_of_libraries({graph}).major);

    // Not a library at all, and a FIFO where one should be: nothing named, nothing blocks.
    write_file(t.path / "lib" / "libcudnn_cnn.so.9.1.0", "not ELF");
    CHECK(cuda_libraries_named_by(t.path / "lib" / "libcudnn_cnn.so.9.1.0").empty());
    REQUIRE(run_command("mkfifo " + shell_quote((t.path / "lib" / "libcudnn_fifo.so.9").string()),
                        t.path.string())
                .ok());
    CHECK(cuda_libraries_named_by(t.path / "lib" / "libcudnn_fifo.so.9").empty());
    auto files = cudnn_library_files(t.path / "lib", 9);
    std::vector<std::string> names;
    for (const auto& f : files)
        names.push_back(f.filename().string());
    CHECK(names == std::vector<std::string>{"libcudnn_adv.so.9.1.0", "libcudnn_cnn.so.9.1.0",
                                            "libcudnn_graph.so.9.1.0"});
}

TEST_CASE("Real PE libraries: imports (cuDNN 8) and UTF-16 names kept to load",
          "[cudnn_cuda_major]") {
    const std::string mingw = "x86_64-w64-mingw32-gcc";
    if (!find_program(mingw)) {
        WARN("x86_64-w64-mingw32-gcc missing (apt-get install mingw-w64): skipping");
        return;
    }
    TempDir t("cmajor-pe");
    build(mingw, t.path / "cublasLt64_11.dll",
          "__declspec(dllexport) int cublasLtCreate(void) { return 0; }\n", "", "");
    fs::path ops = t.path / "cudnn_ops_infer64_8.dll";
    build(mingw, ops,
          "__declspec(dllimport) int cublasLtCreate(void);\n"
          "__declspec(dllexport) int cvm_fn(void) { return cublasLtCreate(); }\n",
          shell_quote((t.path / "cublasLt64_11.dll").string()), "");
    CHECK(cuda_libraries_named_by(ops) == std::vector<std::string>{"cublasLt64_11.dll"});
    fs::path adv = t.path / "cudnn_adv64_9.dll";
    build(mingw, adv,
          "#include <wchar.h>\n__declspec(dllexport) const wchar_t* cvm_loads = "
          "L\"cublasLt64_12.dll\";\n"
          "__declspec(dllexport) const char* cvm_message = \"cublasLt has a bug for cublas "
          "versions < 12\";\n",
          "", "");
    CHECK(cuda_libraries_named_by(adv) == std::vector<std::string>{"cublasLt64_12.dll"});
    CHECK(cuda_major_of_libraries({ops, adv}).disagreement ==
          "cudnn_ops_infer64_8.dll names cublasLt64_11.dll but cudnn_adv64_9.dll names "
          "cublasLt64_12.dll");
}

TEST_CASE("cuDNN import: RPM packages without --cuda take the CUDA their libraries load",
          "[cudnn_cuda_major]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    TempDir t("cmajor-rpm");
    fs::path usr = make_rpm_cudnn(*cc, t.path / "m13", "libcublasLt.so.13", "libnvrtc.so.13");
    auto imp = cudnn_import_of(usr, platform::Os::Linux, std::nullopt, std::nullopt);
    REQUIRE(imp);
    CHECK(imp->entry.id == "9.1.0-cuda13");
    CHECK(imp->entry.note.find(
              "CUDA 13 from its libraries (libcudnn_adv.so.9.1.0 names libcublasLt.so.13)") !=
          std::string::npos);
    // --cuda that agrees is taken; one that contradicts is refused, naming what the libraries load.
    CHECK(cudnn_import_of(usr, platform::Os::Linux, Version{{13}}, std::nullopt)->entry.id ==
          "9.1.0-cuda13");
    try {
        cudnn_import_of(usr, platform::Os::Linux, Version{{12}}, std::nullopt);
        FAIL("expected a conflict");
    } catch (const CudnnCudaConflict& e) {
        CHECK(std::string(e.what()) ==
              "import: --cuda 12 contradicts the cuDNN in " + (usr / "lib64").string() +
                  ": libcudnn_adv.so.9.1.0 names libcublasLt.so.13 (CUDA 13); rerun with "
                  "--cuda 13 or without --cuda");
    }

    // Sub-libraries of different majors: refused, naming both.
    fs::path mixed = make_rpm_cudnn(*cc, t.path / "mixed", "libcublasLt.so.12", "libnvrtc.so.13");
    try {
        cudnn_import_of(mixed, platform::Os::Linux, std::nullopt, std::nullopt);
        FAIL("expected an error");
    } catch (const CudnnImportError& e) {
        std::string what = e.what();
        CHECK(what.find((mixed / "lib64").string()) != std::string::npos);
        CHECK(what.find("libcudnn_adv.so.9.1.0 names libcublasLt.so.12 but "
                        "libcudnn_engines_precompiled.so.9.1.0 "
                        "names libnvrtc.so.13") != std::string::npos);
        CHECK(what.find("--cuda 12") != std::string::npos);
    }
    CHECK(cudnn_import_of(mixed, platform::Os::Linux, Version{{12}}, std::nullopt)->entry.id ==
          "9.1.0-cuda12");

    // Libraries that name no CUDA library: --cuda is asked for, naming the folder.
    fs::path none = make_rpm_cudnn(*cc, t.path / "none", "", "");
    try {
        cudnn_import_of(none, platform::Os::Linux, std::nullopt, std::nullopt);
        FAIL("expected an error");
    } catch (const CudnnImportError& e) {
        std::string what = e.what();
        CHECK(what.find((none / "lib64").string()) != std::string::npos);
        CHECK(what.find("rerun with --cuda 12") != std::string::npos);
    }
}

TEST_CASE("cuDNN import: a plain folder of cuDNN 8 takes the CUDA its libraries link",
          "[cudnn_cuda_major]") {
    auto cc = c_compiler();
    if (!cc) {
        WARN("no C compiler: skipping");
        return;
    }
    TempDir t("cmajor-plain");
    build(*cc, t.path / "stubs" / "libcublasLt.so.12", plain_lib_source, "-Wl,-soname,libcublasLt.so.12");
    fs::path dir = t.path / "cudnn";
    write_file(dir / "include" / "cudnn_version.h", cudnn_version_header(8, 9, 7));
    build(*cc, dir / "lib" / "libcudnn.so.8.9.7", plain_lib_source);
    build(*cc, dir / "lib" / "libcudnn_ops_infer.so.8.9.7", plain_lib_source,
          "-Wl,--no-as-needed -L" + shell_quote((t.path / "stubs").string()) +
              " -l:libcublasLt.so.12");
    auto imp = cudnn_import_of(dir, platform::Os::Linux, std::nullopt, std::nullopt);
    REQUIRE(imp);
    CHECK(imp->entry.id == "8.9.7-cuda12");
    // A release built per CUDA minor: the registry's only variant of the major the libraries link.
    fs::path old = t.path / "cudnn81";
    write_file(old / "include" / "cudnn_version.h", cudnn_version_header(8, 1, 0));
    build(*cc, t.path / "stubs" / "libcublasLt.so.11", plain_lib_source, "-Wl,-soname,libcublasLt.so.11");
    build(*cc, old / "lib" / "libcudnn_ops_infer.so.8.1.0", plain_lib_source,
          "-Wl,--no-as-needed -L" + shell_quote((t.path / "stubs").string()) +
              " -l:libcublasLt.so.11");
    auto lookup = [](const Version&) {
        return std::vector<KnownCudnnRelease>{
            {Version{{8, 1, 0, 77}}, {Version{{10, 2}}, Version{{11, 2}}}}};
    };
    auto imp81 = cudnn_import_of(old, platform::Os::Linux, std::nullopt, std::nullopt, lookup);
    REQUIRE(imp81);
    CHECK(imp81->entry.id == "8.1.0-cuda11.2");
    CHECK(cudnn_import_of(old, platform::Os::Linux, std::nullopt, std::nullopt)->entry.id ==
          "8.1.0-cuda11");
}

TEST_CASE("The real cuDNN of /usr/local/cuda-13.0 names CUDA 13's libraries",
          "[cudnn_cuda_major]") {
    const fs::path lib = "/usr/local/cuda-13.0/lib";
    auto files = cudnn_library_files(lib, 9);
    if (files.empty()) {
        WARN("no cuDNN 9 in /usr/local/cuda-13.0/lib: skipping");
        return;
    }
    auto read = cuda_major_of_libraries(files);
    INFO(read.disagreement);
    CHECK(read.major == 13u);
    bool cublas_lt = false;
    for (const auto& e : read.evidence)
        cublas_lt |= e.name == "libcublasLt.so.13";
    CHECK(cublas_lt);
}
