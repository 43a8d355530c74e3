#include "archive_builder.h"
#include "install/error.h"
#include "install/extract.h"
#include "install/manifest.h"
#include "install/recognize.h"
#include "test_util.h"

using namespace cvm::install;
using namespace cvm::install::test;
namespace fs = std::filesystem;

namespace {

struct Outcome {
    std::optional<Recognized> recognized;
    std::string error;
    fs::path extracted;
};

// Writes the archive under `filename`, extracts it and recognises it as the installer would.
Outcome examine(const ArchiveBuilder& b, const TempDir& tmp, const std::string& filename,
                const std::string& host = "linux-x86_64") {
    bool zip = filename.size() > 4 && (filename.substr(filename.size() - 4) == ".zip" ||
                                       filename.substr(filename.size() - 4) == ".whl");
    bool tgz = filename.find(".tgz") != std::string::npos;
    fs::path archive = tmp / filename;
    fs::remove(archive);
    b.write(archive, zip   ? ArchiveBuilder::Format::Zip
                     : tgz ? ArchiveBuilder::Format::TarGz
                           : ArchiveBuilder::Format::TarXz);
    Outcome out;
    static int counter = 0;
    out.extracted = tmp / ("x" + std::to_string(++counter) + "-" + filename);
    fs::create_directories(out.extracted);
    extract_archive(archive, out.extracted);
    RecognizeOptions options;
    options.host_platform = host;
    options.archive_display = filename;
    try {
        out.recognized = recognize_extracted(out.extracted, parse_archive_name(filename), options);
    } catch (const InstallError& e) {
        out.error = e.what();
        CHECK(e.exit_code() == 2);
    }
    return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

} // namespace

TEST_CASE("binary headers tell the platform", "[recognize]") {
    TempDir tmp;
    write_file(tmp / "a.so", elf_bytes(62));
    write_file(tmp / "b.so", elf_bytes(183));
    write_file(tmp / "c.dll", pe_bytes(0x8664));
    write_file(tmp / "d.txt", "text");
    CHECK(binary_platform(tmp / "a.so") == std::optional<std::string>("linux-x86_64"));
    CHECK(binary_platform(tmp / "b.so") == std::optional<std::string>("linux-sbsa"));
    CHECK(binary_platform(tmp / "c.dll") == std::optional<std::string>("windows-x86_64"));
    CHECK_FALSE(binary_platform(tmp / "d.txt"));
    // A real binary of this machine.
    CHECK(same_machine(binary_platform("/bin/sh").value_or("none"), host_redist_platform()));
    CHECK(same_machine("linux-aarch64", "linux-sbsa"));
    CHECK_FALSE(same_machine("linux-x86_64", "windows-x86_64"));
}

TEST_CASE("cuDNN header versions", "[recognize]") {
    CHECK(parse_cudnn_header_version(cudnn_version_header(8, 1, 0)) == "8.1.0");
    // The real header of the cuDNN in this machine's CUDA 13.0 toolkit, where there is one.
    const char* real = "/usr/local/cuda-13.0/include/cudnn_version.h";
    if (fs::exists(real)) CHECK(parse_cudnn_header_version(read_file(real)).rfind("9.", 0) == 0);
    CHECK(parse_cudnn_header_version("#define CUDNN_MAJOR_X 1\n").empty());
    CHECK(parse_cudnn_header_version("#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n"
                                     "#define CUDNN_PATCHLEVEL 5\n") == "7.6.5");
    CHECK(cudnn_required_libraries(8, false).size() == 7);
    CHECK(cudnn_required_libraries(9, true).back() == "cudnn_engines_runtime_compiled64_9.dll");
}

TEST_CASE("legacy cuDNN tgz for Linux", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    add_cudnn_tree(b, "cuda/", 8, 1, 0, false, "lib64/");
    b.file("cuda/NVIDIA_SLA_cuDNN_Support.txt", "sla");
    Outcome o = examine(b, tmp, "cudnn-11.2-linux-x64-v8.1.0.77.tgz");
    INFO(o.error);
    REQUIRE(o.recognized);
    const Recognized& r = *o.recognized;
    CHECK(r.kind == ProductKind::Cudnn);
    CHECK(r.family == ArchiveFamily::LegacyCudnn);
    CHECK(r.version == "8.1.0.77");
    CHECK(r.header_version == "8.1.0");
    CHECK(r.cuda_variant == "11.2");
    CHECK(r.platform == "linux-x86_64");
    CHECK(r.content_root == o.extracted / "cuda");
    CHECK(r.lib_dir == "lib64");
    CHECK(r.include_dir == "include");
}

TEST_CASE("legacy cuDNN zip for Windows: refused on Linux, accepted for Windows", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    add_cudnn_tree(b, "cuda/", 8, 1, 0, true, "lib/x64/");
    Outcome o = examine(b, tmp, "cudnn-11.2-windows-x64-v8.1.0.77.zip");
    CHECK_FALSE(o.recognized);
    CHECK(contains(o.error, "windows-x86_64"));
    CHECK(contains(o.error, "linux-x86_64"));
    Outcome w = examine(b, tmp, "cudnn-11.2-windows10-x64-v8.1.0.77.zip", "windows-x86_64");
    INFO(w.error);
    REQUIRE(w.recognized);
    CHECK(w.recognized->lib_dir == "lib/x64");
    CHECK(w.recognized->bin_dir == "bin");
    CHECK(w.recognized->version == "8.1.0.77");
}

TEST_CASE("a name that disagrees with the header is refused naming both", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    add_cudnn_tree(b, "cuda/", 8, 0, 5, false, "lib64/");
    Outcome o = examine(b, tmp, "cudnn-11.2-linux-x64-v8.1.1.33.tgz");
    CHECK_FALSE(o.recognized);
    CHECK(contains(o.error, "8.1.1"));
    CHECK(contains(o.error, "8.0.5"));
    CHECK(contains(o.error, "cudnn_version.h"));
}

TEST_CASE("cuDNN 9 redist archive, and the same file renamed", "[recognize]") {
    TempDir tmp;
    const std::string folder = "cudnn-linux-x86_64-9.19.0.56_cuda13-archive/";
    ArchiveBuilder b;
    add_cudnn_tree(b, folder, 9, 19, 0, false, "lib/");
    Outcome o = examine(b, tmp, "cudnn-linux-x86_64-9.19.0.56_cuda13-archive.tar.xz");
    INFO(o.error);
    REQUIRE(o.recognized);
    CHECK(o.recognized->version == "9.19.0.56");
    CHECK(o.recognized->cuda_variant == "13");
    CHECK(o.recognized->family == ArchiveFamily::CudnnRedist);
    CHECK(o.recognized->lib_dir == "lib");
    CHECK(o.recognized->content_root.filename() == "cudnn-linux-x86_64-9.19.0.56_cuda13-archive");
    Outcome renamed = examine(b, tmp, "download.tar.xz");
    INFO(renamed.error);
    REQUIRE(renamed.recognized);
    CHECK(renamed.recognized->version == "9.19.0.56");
    CHECK(renamed.recognized->cuda_variant == "13");
    // The file name and the folder inside disagree.
    Outcome clash = examine(b, tmp, "cudnn-linux-x86_64-9.19.0.56_cuda12-archive.tar.xz");
    CHECK(contains(clash.error, "cuda13-archive"));
    CHECK(contains(clash.error, "says CUDA 12"));
}

TEST_CASE("an incomplete cuDNN is refused naming what is missing", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    add_cudnn_tree(b, "cudnn-linux-x86_64-9.1.0.70_cuda12-archive/", 9, 1, 0, false, "lib/",
                   "libcudnn_graph.so.9");
    Outcome o = examine(b, tmp, "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz");
    CHECK_FALSE(o.recognized);
    CHECK(contains(o.error, "incomplete"));
    CHECK(contains(o.error, "libcudnn_graph.so.9"));
    ArchiveBuilder w;
    add_cudnn_tree(w, "cuda/", 8, 1, 0, true, "lib/x64/", "cudnn_cnn_infer64_8.dll");
    Outcome ow = examine(w, tmp, "cudnn-11.2-windows-x64-v8.1.0.77.zip", "windows-x86_64");
    CHECK(contains(ow.error, "cudnn_cnn_infer64_8.dll"));
}

TEST_CASE("a legacy archive without its name cannot tell its CUDA", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    add_cudnn_tree(b, "cuda/", 8, 1, 0, false, "lib64/");
    Outcome o = examine(b, tmp, "mycudnn.tgz");
    CHECK(contains(o.error, "cannot tell which CUDA"));
}

TEST_CASE("a name that says another machine than the binaries", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    add_cudnn_tree(b, "cuda/", 8, 1, 0, false, "lib64/");
    Outcome o = examine(b, tmp, "cudnn-11.2-linux-aarch64sbsa-v8.1.0.77.tgz");
    CHECK(contains(o.error, "linux-sbsa"));
    CHECK(contains(o.error, "linux-x86_64"));
    // aarch64 binaries named sbsa, on an x86 host: another platform.
    ArchiveBuilder arm;
    arm.file("cuda/include/cudnn_version.h", cudnn_version_header(8, 1, 0))
        .file("cuda/lib64/libcudnn.so.8", elf_bytes(183));
    Outcome a = examine(arm, tmp, "cudnn-11.2-linux-aarch64sbsa-v8.1.0.78.tgz");
    CHECK(contains(a.error, "build for linux-sbsa"));
}

TEST_CASE("cuDNN wheels", "[recognize]") {
    TempDir tmp;
    auto wheel = [](const std::string& version, const std::string& project) {
        ArchiveBuilder b;
        add_cudnn_tree(b, "nvidia/cudnn/", 9, 1, 0, false, "lib/");
        b.file("nvidia/__init__.py", "");
        std::string dist = "nvidia_cudnn_cu12-" + version + ".dist-info/";
        b.file(dist + "METADATA", "Metadata-Version: 2.1\nName: " + project +
                                      "\nVersion: " + version + "\n\nbody: text\n");
        b.file(dist + "WHEEL", "Wheel-Version: 1.0\nTag: py3-none-manylinux2014_x86_64\n");
        return b;
    };
    Outcome o = examine(wheel("9.1.0.70", "nvidia-cudnn-cu12"), tmp,
                        "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl");
    INFO(o.error);
    REQUIRE(o.recognized);
    CHECK(o.recognized->family == ArchiveFamily::CudnnWheel);
    CHECK(o.recognized->version == "9.1.0.70");
    CHECK(o.recognized->cuda_variant == "12");
    CHECK(o.recognized->content_root == o.extracted / "nvidia" / "cudnn");
    Outcome bad = examine(wheel("9.1.0.77", "nvidia-cudnn-cu12"), tmp,
                          "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl");
    CHECK(contains(bad.error, "9.1.0.70"));
    CHECK(contains(bad.error, "9.1.0.77"));
    Outcome other = examine(wheel("9.1.0.70", "nvidia-cudnn-cu11"), tmp,
                            "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl");
    CHECK(contains(other.error, "nvidia-cudnn-cu11"));
    Outcome win = examine(wheel("9.1.0.70", "nvidia-cudnn-cu12"), tmp,
                          "nvidia_cudnn_cu12-9.1.0.70-py3-none-win_amd64.whl");
    CHECK(contains(win.error, "windows-x86_64"));
}

TEST_CASE("CUDA component archives", "[recognize]") {
    TempDir tmp;
    auto cudart = [](const std::string& folder, int cuda_version) {
        ArchiveBuilder b;
        b.file(folder + "include/cuda.h",
               "#define CUDA_VERSION " + std::to_string(cuda_version) + "\n")
            .file(folder + "include/cuda_runtime.h", "")
            .file(folder + "lib/libcudart.so.11.8.89", elf_bytes(62), 0755)
            .symlink(folder + "lib/libcudart.so.11.0", "libcudart.so.11.8.89")
            .file(folder + "LICENSE", "l");
        return b;
    };
    const std::string folder = "cuda_cudart-linux-x86_64-11.8.89-archive/";
    Outcome o =
        examine(cudart(folder, 11080), tmp, "cuda_cudart-linux-x86_64-11.8.89-archive.tar.xz");
    INFO(o.error);
    REQUIRE(o.recognized);
    CHECK(o.recognized->kind == ProductKind::Cuda);
    CHECK(o.recognized->component == "cuda_cudart");
    CHECK(o.recognized->version == "11.8.89");
    CHECK(o.recognized->cuda_release == "11.8");
    CHECK(o.recognized->family == ArchiveFamily::CudaComponent);
    Outcome mismatch =
        examine(cudart(folder, 11070), tmp, "cuda_cudart-linux-x86_64-11.8.89-archive.tar.xz");
    CHECK(contains(mismatch.error, "11.7"));
    CHECK(contains(mismatch.error, "11.8.89"));
    // A header-only component: no binaries, so the name and folder decide.
    ArchiveBuilder cccl;
    cccl.file("cuda_cccl-linux-x86_64-11.8.89-archive/include/thrust/version.h", "");
    Outcome c = examine(cccl, tmp, "cuda_cccl-linux-x86_64-11.8.89-archive.tar.xz");
    REQUIRE(c.recognized);
    CHECK(c.recognized->component == "cuda_cccl");
    CHECK(c.recognized->platform == "linux-x86_64");
    Outcome clash = examine(cccl, tmp, "cuda_nvcc-linux-x86_64-11.8.89-archive.tar.xz");
    CHECK(contains(clash.error, "cuda_nvcc"));
    CHECK(contains(clash.error, "cuda_cccl"));
}

TEST_CASE("a whole toolkit with version.json", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    b.file("cuda-12.4/version.json", R"({"cuda":{"name":"CUDA SDK","version":"12.4.1"}})")
        .file("cuda-12.4/include/cuda.h", "#define CUDA_VERSION 12040\n")
        .file("cuda-12.4/bin/nvcc", elf_bytes(62), 0755);
    Outcome o = examine(b, tmp, "cuda-12.4.tar.xz");
    INFO(o.error);
    REQUIRE(o.recognized);
    CHECK(o.recognized->kind == ProductKind::Cuda);
    CHECK(o.recognized->version == "12.4.1");
    CHECK(o.recognized->component.empty());
    CHECK(o.recognized->bin_dir == "bin");
}

TEST_CASE("archives holding nothing known are refused", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    b.file("photos/cat.jpg", "meow");
    Outcome o = examine(b, tmp, "holiday.tar.xz");
    CHECK(contains(o.error, "neither cuDNN"));
    Outcome named = examine(b, tmp, "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz");
    CHECK(contains(named.error, "name says cuDNN"));
}

namespace {

void add_nccl_tree(ArchiveBuilder& b, const std::string& prefix, const std::string& lib_version,
                   const std::string& cuda, const std::string& header_version) {
    b.file(prefix + "lib/libnccl.so." + lib_version,
           "not ELF; NCCL version " + lib_version + (cuda.empty() ? "" : "+cuda" + cuda) +
               std::string(1, '\0'),
           0755);
    b.symlink(prefix + "lib/libnccl.so.2", "libnccl.so." + lib_version);
    b.symlink(prefix + "lib/libnccl.so", "libnccl.so.2");
    auto a = header_version.find('.'), c = header_version.rfind('.');
    b.file(prefix + "include/nccl.h",
           "#define NCCL_MAJOR " + header_version.substr(0, a) + "\n#define NCCL_MINOR " +
               header_version.substr(a + 1, c - a - 1) + "\n#define NCCL_PATCH " +
               header_version.substr(c + 1) + "\n");
}

} // namespace

TEST_CASE("NCCL archives: version and CUDA from the library, checked against the name",
          "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    add_nccl_tree(b, "nccl_2.21.5-1+cuda12.4_x86_64/", "2.21.5", "12.4", "2.21.5");
    b.file("nccl_2.21.5-1+cuda12.4_x86_64/LICENSE.txt", "license");
    Outcome o = examine(b, tmp, "nccl_2.21.5-1+cuda12.4_x86_64.txz");
    INFO(o.error);
    REQUIRE(o.recognized);
    const Recognized& r = *o.recognized;
    CHECK(r.kind == ProductKind::Nccl);
    CHECK(r.family == ArchiveFamily::NcclArchive);
    CHECK(r.version == "2.21.5");
    CHECK(r.cuda_variant == "12.4");
    CHECK(r.lib_dir == "lib");
    CHECK(r.content_root == o.extracted / "nccl_2.21.5-1+cuda12.4_x86_64");
    CHECK(contains(r.evidence, "NCCL version 2.21.5+cuda12.4"));

    // Any other name: the folder still says what it is, and the library decides.
    Outcome renamed = examine(b, tmp, "nccl.txz");
    INFO(renamed.error);
    REQUIRE(renamed.recognized);
    CHECK(renamed.recognized->version == "2.21.5");

    // A name (or folder) of another release, a header of another one, a name of another CUDA.
    Outcome wrong_name = examine(b, tmp, "nccl_2.20.3-1+cuda12.4_x86_64.txz");
    CHECK_FALSE(wrong_name.recognized);
    CHECK(contains(wrong_name.error, "says version 2.20.3"));
    ArchiveBuilder h;
    add_nccl_tree(h, "nccl_2.21.5-1+cuda12.4_x86_64/", "2.21.5", "12.4", "2.19.3");
    Outcome header = examine(h, tmp, "nccl_2.21.5-1+cuda12.4_x86_64.txz");
    CHECK(contains(header.error, "include/nccl.h says NCCL 2.19.3"));
    ArchiveBuilder c;
    add_nccl_tree(c, "nccl_2.21.5-1+cuda12.2_x86_64/", "2.21.5", "12.4", "2.21.5");
    Outcome cuda = examine(c, tmp, "nccl_2.21.5-1+cuda12.2_x86_64.txz");
    CHECK(contains(cuda.error, "says CUDA 12.2"));
    CHECK(contains(cuda.error, "was built for CUDA 12.4"));
    // No library at all.
    ArchiveBuilder empty;
    empty.file("nccl_2.21.5-1+cuda12.4_x86_64/include/nccl.h", "#define NCCL_MAJOR 2\n");
    Outcome none = examine(empty, tmp, "nccl_2.21.5-1+cuda12.4_x86_64.txz");
    CHECK(contains(none.error, "no lib/libnccl.so.2"));
    // A library without NCCL's text.
    ArchiveBuilder mute;
    mute.file("nccl_2.21.5-1+cuda12.4_x86_64/lib/libnccl.so.2", "nothing", 0755);
    Outcome silent = examine(mute, tmp, "nccl_2.21.5-1+cuda12.4_x86_64.txz");
    CHECK(contains(silent.error, "does not say which NCCL it is"));
}

TEST_CASE("NCCL wheels: nvidia/nccl is the root, the CUDA minor is the library's", "[recognize]") {
    TempDir tmp;
    ArchiveBuilder b;
    add_nccl_tree(b, "nvidia/nccl/", "2.28.9", "13.0", "2.28.9");
    b.file("nvidia_nccl_cu13-2.28.9.dist-info/METADATA",
           "Metadata-Version: 2.1\nName: nvidia-nccl-cu13\nVersion: 2.28.9\n");
    Outcome o = examine(b, tmp, "nvidia_nccl_cu13-2.28.9-py3-none-manylinux_2_18_x86_64.whl");
    INFO(o.error);
    REQUIRE(o.recognized);
    CHECK(o.recognized->kind == ProductKind::Nccl);
    CHECK(o.recognized->family == ArchiveFamily::NcclWheel);
    CHECK(o.recognized->cuda_variant == "13.0");
    CHECK(o.recognized->content_root == o.extracted / "nvidia" / "nccl");
    Outcome cu12 = examine(b, tmp, "nvidia_nccl_cu12-2.28.9-py3-none-manylinux_2_18_x86_64.whl");
    CHECK_FALSE(cu12.recognized);
}
