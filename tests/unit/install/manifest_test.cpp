#include "install/error.h"
#include "install/manifest.h"
#include "test_util.h"

#include <algorithm>

using namespace cvm::install;
using cvm::install::test::install_error_of;
using cvm::install::test::read_file;
using cvm::install::test::redist_fixtures;

namespace {

Manifest cuda_118() {
    auto path = redist_fixtures() / "cuda" / "redistrib_11.8.0.excerpt.json";
    return parse_manifest(read_file(path), path.filename().string());
}

Manifest cudnn_897() {
    auto path = redist_fixtures() / "cudnn" / "redistrib_8.9.7.json";
    return parse_manifest(read_file(path), path.filename().string());
}

} // namespace

TEST_CASE("CUDA 11.8 manifest parses as NVIDIA writes it", "[manifest]") {
    Manifest m = cuda_118();
    CHECK(m.release_date == "2022-10-03");
    REQUIRE(m.components.size() == 7);
    const ManifestComponent* nvcc = m.find("cuda_nvcc");
    REQUIRE(nvcc != nullptr);
    CHECK(nvcc->version == "11.8.89");
    CHECK(nvcc->cuda_variants.empty());
    const Artifact& a = select_artifact(*nvcc, "linux-x86_64");
    CHECK(a.relative_path ==
          "cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-11.8.89-archive.tar.xz");
    CHECK(a.sha256.size() == 64);
    CHECK(a.size > 1000000);
    const Artifact& w = select_artifact(*nvcc, "windows-x86_64");
    CHECK(w.relative_path.find(".zip") != std::string::npos);
    CHECK(w.relative_path != a.relative_path);
    const ManifestComponent* cccl = m.find("cuda_cccl");
    REQUIRE(cccl != nullptr);
    CHECK(select_artifact(*cccl, "linux-x86_64").size == 1006416);
    CHECK(select_artifact(*cccl, "linux-sbsa").sha256 ==
          "b7cdd513d4ee079f3ebe78ae1e156b678fa4f7df096459ae5bea8dc63db8a4f4");
}

TEST_CASE("platform selection refuses a platform without an archive", "[manifest]") {
    Manifest m = cuda_118();
    const ManifestComponent* compat = m.find("cuda_compat");
    REQUIRE(compat != nullptr);
    CHECK(compat->available_on("linux-aarch64"));
    CHECK_FALSE(compat->available_on("linux-x86_64"));
    std::string msg = install_error_of([&] { select_artifact(*compat, "linux-x86_64"); });
    CHECK(msg.find("cuda_compat") != std::string::npos);
    CHECK(msg.find("linux-x86_64") != std::string::npos);
    CHECK(msg.find("linux-aarch64") != std::string::npos);
}

TEST_CASE("cuDNN 8.9.7 manifest: variant level", "[manifest]") {
    Manifest m = cudnn_897();
    CHECK(m.release_label == "8.9.7");
    CHECK(m.release_product == "cudnn");
    const ManifestComponent* cudnn = m.find("cudnn");
    REQUIRE(cudnn != nullptr);
    CHECK(cudnn->version == "8.9.7.29");
    CHECK(cudnn->cuda_variants == std::vector<std::string>{"11", "12"});
    const Artifact& a12 = select_artifact(*cudnn, "linux-x86_64", "12");
    CHECK(a12.relative_path ==
          "cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz");
    CHECK(a12.size == 864984964ULL);
    CHECK(select_artifact(*cudnn, "linux-x86_64", "11.8").relative_path.find("_cuda11-") !=
          std::string::npos);
    CHECK(select_artifact(*cudnn, "windows-x86_64", "12.4").relative_path ==
          "cudnn/windows-x86_64/cudnn-windows-x86_64-8.9.7.29_cuda12-archive.zip");
    CHECK(select_variant(*cudnn, "linux-sbsa", "11") == "cuda11");
    std::string msg = install_error_of([&] { select_artifact(*cudnn, "linux-x86_64", "10.2"); });
    CHECK(msg.find("CUDA 10.2") != std::string::npos);
    CHECK(msg.find("cuda11, cuda12") != std::string::npos);
    CHECK(install_error_of([&] { select_artifact(*cudnn, "linux-x86_64", ""); }).find("--cuda") !=
          std::string::npos);
    CHECK(install_error_of([&] {
              select_artifact(*cudnn, "linux-x86_64", "twelve");
          }).find("\"twelve\"") != std::string::npos);
}

TEST_CASE("default toolkit components are those present for the platform", "[manifest]") {
    Manifest m = cuda_118();
    auto linux_set = default_toolkit_components(m, "linux-x86_64");
    CHECK(linux_set ==
          std::vector<std::string>{"cuda_nvcc", "cuda_cudart", "cuda_cccl", "cuda_nvrtc"});
    // Nothing the developer set does not name: no compat, no gdb, no fabricmanager.
    auto aarch = default_toolkit_components(m, "linux-aarch64");
    CHECK(std::find(aarch.begin(), aarch.end(), "cuda_compat") == aarch.end());
}

TEST_CASE("--components validation names the unknown one and what exists", "[manifest]") {
    Manifest m = cuda_118();
    CHECK(resolve_components(m, "linux-x86_64", {"cuda_nvcc, cuda_cudart"}) ==
          std::vector<std::string>{"cuda_nvcc", "cuda_cudart"});
    CHECK(resolve_components(m, "linux-x86_64", {}) ==
          default_toolkit_components(m, "linux-x86_64"));
    auto with_gdb = resolve_components(m, "linux-x86_64", {"default,cuda_gdb,cuda_nvcc"});
    CHECK(with_gdb.back() == "cuda_gdb");
    CHECK(with_gdb.size() == 5);
    std::string msg =
        install_error_of([&] { resolve_components(m, "linux-x86_64", {"cuda_nvcc,cublas"}); });
    CHECK(msg.find("\"cublas\"") != std::string::npos);
    CHECK(msg.find("cuda_nvrtc") != std::string::npos);
    CHECK(msg.find("fabricmanager") != std::string::npos);
    std::string plat =
        install_error_of([&] { resolve_components(m, "linux-x86_64", {"cuda_compat"}); });
    CHECK(plat.find("no archive for linux-x86_64") != std::string::npos);
    try {
        resolve_components(m, "linux-x86_64", {"nope"});
        FAIL("no error");
    } catch (const InstallError& e) {
        CHECK(e.exit_code() == 2);
    }
}

TEST_CASE("malformed manifests are refused with the origin named", "[manifest]") {
    auto msg = [](const std::string& text) {
        return install_error_of([&] { parse_manifest(text, "m.json"); });
    };
    CHECK(msg("{").find("m.json is not valid JSON") != std::string::npos);
    CHECK(msg("[]").find("not a JSON object") != std::string::npos);
    CHECK(msg(R"({"release_date":"x"})").find("lists no archives") != std::string::npos);
    const std::string good_sha(64, 'a');
    auto entry = [&](const std::string& fields) {
        return R"({"c":{"version":"1.0","linux-x86_64":{)" + fields + "}}}";
    };
    CHECK(msg(entry(R"("relative_path":"c/x.tar.xz","sha256":"zz","size":"1")"))
              .find("sha256 \"zz\"") != std::string::npos);
    CHECK(msg(entry(R"("relative_path":"c/x.tar.xz","sha256":")" + good_sha + R"(","size":"1x")"))
              .find("size \"1x\"") != std::string::npos);
    CHECK(msg(entry(R"("relative_path":"../x.tar.xz","sha256":")" + good_sha + R"(")"))
              .find("not a plain relative path") != std::string::npos);
    CHECK(msg(entry(R"("relative_path":"/etc/x","sha256":")" + good_sha + R"(")"))
              .find("not a plain relative path") != std::string::npos);
    CHECK(msg(R"({"c":{"linux-x86_64":{"relative_path":"c/x","sha256":")" + good_sha + R"("}}})")
              .find("missing \"version\"") != std::string::npos);
    Manifest ok = parse_manifest(entry(R"("relative_path":"c/x.tar.xz","sha256":")" +
                                       std::string(64, 'A') + R"(","size":42)"),
                                 "m.json");
    CHECK(ok.find("c")->platforms.at("linux-x86_64").at("").sha256 == good_sha);
    CHECK(ok.find("c")->platforms.at("linux-x86_64").at("").size == 42);
}

TEST_CASE("host platform is one NVIDIA builds for", "[manifest]") {
    std::string host = host_redist_platform();
    CHECK(is_known_redist_platform(host));
    CHECK_FALSE(is_known_redist_platform("linux-i386"));
}
