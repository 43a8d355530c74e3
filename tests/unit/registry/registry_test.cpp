// Tests of cvm_registry against the real registry/*.toml files: they parse, and the facts other
// modules build rules on hold. Malformed files must fail with the file, line and key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "registry/registry.h"
#include "registry_support.h"
#include "test_support.h"
#include "version_support.h"

namespace fs = std::filesystem;
using namespace cvm;
using namespace cvm::registry;
using cvm::test::read_file;
using cvm::test::real_registry;
using cvm::test::TempDir;
using cvm::test::v;
using cvm::test::write_file;

namespace {

// A registry folder holding copies of the real files, with `name` replaced by `text`.
void copy_registry_with(const fs::path& dir, const std::string& name, const std::string& text) {
    for (const char* f : {"cuda.toml", "cudnn.toml", "frameworks.toml"})
        write_file(dir / f, read_file(source_tree_registry_dir() / f));
    write_file(dir / name, text);
}

std::string load_error(const fs::path& dir) {
    try {
        load_registry(dir);
    } catch (const RegistryError& e) {
        return e.what();
    }
    FAIL("load_registry accepted a malformed registry in " << dir.string());
    return {};
}

} // namespace

TEST_CASE("the real registry files parse and are consistent", "[registry]") {
    const Registry& reg = real_registry();
    CHECK(reg.cuda.size() >= 50);
    CHECK(reg.cudnn.size() >= 50);
    CHECK(reg.frameworks.size() >= 30);

    // Every 11.x and 12.x release NVIDIA lists, and 13.0 up to Update 2.
    for (const char* text :
         {"10.0.130", "10.2.89", "11.0.3", "11.1.1", "11.2.0", "11.2.2", "11.3.1", "11.4.4",
          "11.5.2",   "11.6.2",  "11.7.1", "11.8.0", "12.0.1", "12.1.1", "12.2.2", "12.3.2",
          "12.4.1",   "12.5.1",  "12.6.3", "12.8.1", "12.9.1", "13.0.0", "13.0.1", "13.0.2"}) {
        INFO(text);
        const CudaRelease* r = find_cuda_release(reg, v(text));
        REQUIRE(r != nullptr);
        CHECK(r->version == v(text));
        CHECK_FALSE(r->source.empty());
    }

    // Sorted, and a manifest exactly from 11.4.0 on.
    for (size_t i = 1; i < reg.cuda.size(); ++i)
        CHECK(reg.cuda[i - 1].version < reg.cuda[i].version);
    for (const auto& r : reg.cuda) {
        INFO(r.version.str());
        CHECK(r.manifest.empty() == (r.version < v("11.4.0")));
        if (!r.manifest.empty()) CHECK(r.manifest == "redistrib_" + r.version.str() + ".json");
    }

    // Every cuDNN build supports the CUDA it was built for, and its range stays in its major.
    for (const auto& r : reg.cudnn) {
        INFO(r.version.str());
        CHECK_FALSE(r.builds.empty());
        CHECK_FALSE(r.source.empty());
        for (const auto& b : r.builds) {
            INFO("cuda" << b.cuda.str());
            CHECK(b.supports_min.major() == b.cuda.major());
            CHECK(b.supports_max.major() == b.cuda.major());
            if (b.cuda.parts.size() == 2) CHECK(cudnn_build_supports(b, b.cuda));
        }
    }
    // Every release has a library set for its major.
    for (const auto& r : reg.cudnn)
        CHECK_FALSE(cudnn_library_names(reg, r.version.major(), Platform::Linux).empty());
}

TEST_CASE("cuDNN 8.1.0.77 for CUDA 11.2 supports CUDA 11.0 to 11.2", "[registry]") {
    const Registry& reg = real_registry();
    auto range = cudnn_supported_cuda(reg, "8.1.0.77-cuda11.2");
    REQUIRE(range);
    CHECK(range->first == v("11.0"));
    CHECK(range->second == v("11.2"));

    auto ref = find_cudnn_build(reg, "8.1.0.77-cuda11.2");
    REQUIRE(ref);
    CHECK(ref->id() == "8.1.0.77-cuda11.2");
    CHECK(cudnn_build_supports(*ref->build, v("11.0.3")));
    CHECK(cudnn_build_supports(*ref->build, v("11.1")));
    CHECK(cudnn_build_supports(*ref->build, v("11.2.2")));
    CHECK_FALSE(cudnn_build_supports(*ref->build, v("11.3.0")));
    CHECK_FALSE(cudnn_build_supports(*ref->build, v("10.2.89")));
    CHECK_FALSE(cudnn_build_supports(*ref->build, v("12.0")));

    // The archive names people hold.
    const auto& win = ref->build->windows_archives;
    CHECK(std::find(win.begin(), win.end(), "cudnn-11.2-windows-x64-v8.1.0.77.zip") != win.end());
    const auto& lin = ref->build->linux_archives;
    CHECK(std::find(lin.begin(), lin.end(), "cudnn-11.2-linux-x64-v8.1.0.77.tgz") != lin.end());
    auto sibling = find_cudnn_build(reg, "8.1.0.77-cuda10.2");
    REQUIRE(sibling);
    CHECK(sibling->build->windows_archives.front() == "cudnn-10.2-windows10-x64-v8.1.0.77.zip");

    CHECK_FALSE(find_cudnn_build(reg, "8.1.0.77-cuda11.3"));
    CHECK_FALSE(find_cudnn_build(reg, "8.1.0.78-cuda11.2"));
    CHECK_FALSE(find_cudnn_build(reg, "not-an-id"));
}

TEST_CASE("per-major cuDNN builds and their redist names", "[registry]") {
    const Registry& reg = real_registry();
    auto ref = find_cudnn_build(reg, "8.9.7.29-cuda12");
    REQUIRE(ref);
    CHECK(ref->release->manifest == "redistrib_8.9.7.json");
    CHECK(cudnn_build_supports(*ref->build, v("12.2")));
    CHECK_FALSE(cudnn_build_supports(*ref->build, v("11.8")));
    // As NVIDIA names it in redistrib_8.9.7.json.
    CHECK(cudnn_redist_archive_name(*ref, "linux-x86_64") ==
          "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz");
    CHECK(cudnn_redist_archive_name(*ref, "windows-x86_64") ==
          "cudnn-windows-x86_64-8.9.7.29_cuda12-archive.zip");

    // Three numbers name the release too.
    auto short_ref = find_cudnn_build(reg, "8.9.7-cuda11");
    REQUIRE(short_ref);
    CHECK(short_ref->id() == "8.9.7.29-cuda11");

    auto nine = find_cudnn_build(reg, "9.19.0.56-cuda13");
    REQUIRE(nine);
    CHECK(cudnn_build_supports(*nine->build, v("13.0.2")));
    CHECK(find_cudnn_release(reg, v("9.1"))->version == v("9.1.1.17"));
    CHECK(find_cudnn_release(reg, v("9.1.0"))->version == v("9.1.0.70"));

    // Builds that serve a toolkit: 11.2 is served by 8.1.x-cuda11.2 but by no cuda12 build.
    auto for_112 = cudnn_builds_for_cuda(reg, v("11.2.2"));
    std::set<std::string> ids;
    for (const auto& b : for_112)
        ids.insert(b.id());
    CHECK(ids.count("8.1.0.77-cuda11.2") == 1);
    CHECK(ids.count("8.9.7.29-cuda11") == 1);
    CHECK(ids.count("8.9.7.29-cuda12") == 0);
    CHECK(ids.count("8.1.0.77-cuda10.2") == 0);
}

TEST_CASE("minimum drivers", "[registry]") {
    const Registry& reg = real_registry();
    auto ga = minimum_driver(reg, v("11.2.0"), Platform::Linux, DriverRule::Toolkit);
    REQUIRE(ga);
    CHECK(ga->driver.text == "460.27.03");
    CHECK_FALSE(ga->inferred);
    auto ga_win = minimum_driver(reg, v("11.2.0"), Platform::Windows, DriverRule::Toolkit);
    REQUIRE(ga_win);
    CHECK(ga_win->driver.text == "460.82");

    // A prefix means the newest release with it: 11.2 is 11.2.2.
    auto u2 = minimum_driver(reg, v("11.2"), Platform::Linux, DriverRule::Toolkit);
    REQUIRE(u2);
    CHECK(u2->driver.text == "460.32.03");
    CHECK(u2->release->version == v("11.2.2"));

    auto c13 = minimum_driver(reg, v("13.0.2"), Platform::Linux, DriverRule::Toolkit);
    REQUIRE(c13);
    CHECK(c13->driver.text == "580.95.05");
    // NVIDIA prints N/A for Windows from 13.0 on.
    CHECK_FALSE(minimum_driver(reg, v("13.0.0"), Platform::Windows, DriverRule::Toolkit));

    // Minor-version compatibility floors.
    auto m11 = minimum_driver(reg, v("11.8"), Platform::Linux, DriverRule::MinorCompat);
    auto m11w = minimum_driver(reg, v("11.2.2"), Platform::Windows, DriverRule::MinorCompat);
    auto m12 = minimum_driver(reg, v("12.4.1"), Platform::Linux, DriverRule::MinorCompat);
    auto m12w = minimum_driver(reg, v("12"), Platform::Windows, DriverRule::MinorCompat);
    auto m13 = minimum_driver(reg, v("13.0"), Platform::Linux, DriverRule::MinorCompat);
    REQUIRE(m11);
    REQUIRE(m11w);
    REQUIRE(m12);
    REQUIRE(m12w);
    REQUIRE(m13);
    CHECK(m11->driver.text == "450.80.02");
    CHECK(m11w->driver.text == "452.39");
    CHECK(m12->driver.text == "525.60.13");
    CHECK(m12w->driver.text == "527.41");
    CHECK(m13->driver.text == "580.65.06");
    CHECK_FALSE(minimum_driver(reg, v("10.2"), Platform::Linux, DriverRule::MinorCompat));

    // Comparing: the GPU machine's 580.159.04 meets 13.0.2's 580.95.05; 575.x does not.
    CHECK(c13->driver.value < parse_driver_version("580.159.04")->value);
    CHECK(parse_driver_version("575.57.08")->value < c13->driver.value);
    CHECK_FALSE(parse_driver_version("580"));
    CHECK_FALSE(parse_driver_version("580.x"));

    // Driver requirements never go down from one release to the next within a minor.
    for (size_t i = 1; i < reg.cuda.size(); ++i) {
        const auto& a = reg.cuda[i - 1];
        const auto& b = reg.cuda[i];
        if (a.version.major() != b.version.major() || a.version.minor() != b.version.minor())
            continue;
        if (a.driver_linux && b.driver_linux) {
            INFO(a.version.str() << " -> " << b.version.str());
            CHECK_FALSE(b.driver_linux->value < a.driver_linux->value);
        }
    }
}

TEST_CASE("nvcc's build number is told from a release", "[registry]") {
    const Registry& reg = real_registry();
    // `nvcc --version`: "release 11.8, V11.8.89"; 11.8.0 is the only 11.8.
    auto b = nvcc_build_number(&reg, v("11.8.89"));
    REQUIRE(b);
    CHECK(b->known);
    CHECK(b->release == "11.8");
    CHECK(nvcc_build_line(v("11.8.89"), *b, "cvm install") ==
          "11.8.89 is nvcc's build number of CUDA 11.8; run `cvm install 11.8`");
    // The newest 12.4 (12.4.1) ships 12.4.131; 12.4.99 is 12.4.0's, named in full.
    CHECK(nvcc_build_number(&reg, v("12.4.131"))->release == "12.4");
    CHECK(nvcc_build_number(&reg, v("12.4.99"))->release == "12.4.0");
    // One nvcc in two updates (13.0.1, 13.0.2), and the newest 13.0 (13.0.3) records none: the newest of the two.
    CHECK(nvcc_build_number(&reg, v("13.0.88"))->release == "13.0.2");
    // Releases are no builds, whatever their numbers: 10.2.89 (before 11.0 the toolkit had nvcc's number), 12.4.1.
    for (const char* release : {"10.2.89", "10.0.130", "11.4.4", "12.4.1", "13.2.2"})
        CHECK_FALSE(nvcc_build_number(&reg, v(release)));
    // Unknown numbers: small updates may be releases; 10 and up are nvcc's (from 11.0 on).
    CHECK_FALSE(nvcc_build_number(&reg, v("12.9.9")));
    CHECK_FALSE(nvcc_build_number(&reg, v("10.3.50")));
    CHECK_FALSE(nvcc_build_number(&reg, v("12.4")));
    auto unknown = nvcc_build_number(&reg, v("13.7.40"));
    REQUIRE(unknown);
    CHECK_FALSE(unknown->known);
    CHECK_FALSE(unknown->minor_known);
    CHECK(nvcc_build_line(v("13.7.40"), *unknown, "cvm use", "+9", "nothing written") ==
          "13.7.40 looks like nvcc's build number of CUDA 13.7 (toolkit releases are numbered 13.7.0, 13.7.1, ...); "
          "nothing written; run `cvm update` (cvm knows no CUDA 13.7 yet), then `cvm use 13.7+9`");
    CHECK(nvcc_build_number(&reg, v("12.4.50"))->minor_known);
    // Without a registry, the numbering alone.
    CHECK(nvcc_build_number(nullptr, v("11.8.89"))->release == "11.8");
    CHECK_FALSE(nvcc_build_number(nullptr, v("11.8.0")));
    CHECK_FALSE(nvcc_build_number(nullptr, v("10.2.89")));
    // Every release the registry records an nvcc for: its nvcc is told as a build, its version is not.
    for (const auto& r : reg.cuda) {
        INFO(r.version.str());
        CHECK_FALSE(nvcc_build_number(&reg, r.version));
        if (r.nvcc && *r.nvcc != r.version) CHECK(nvcc_build_number(&reg, *r.nvcc));
        // The numbering rule agrees with the registry from 11.0 on: updates small, builds large.
        if (r.version.major() >= 11) {
            CHECK(r.version.parts[2] < kSmallestNvccBuild);
            if (r.nvcc) CHECK(r.nvcc->parts[2] >= kSmallestNvccBuild);
        }
    }
}

TEST_CASE("a toolkit assembled from wheels is given its release", "[registry]") {
    const Registry& reg = real_registry();
    // /usr/local/cuda-13.0 here: nvidia_cuda_runtime-13.0.96, nvidia_cuda_nvcc-13.0.88.
    auto both = find_cuda_by_components(reg, v("13.0.96"), v("13.0.88"));
    REQUIRE(both.size() == 1);
    CHECK(both.front()->version == v("13.0.2"));
    auto by_cudart = find_cuda_by_components(reg, v("13.0.96"), std::nullopt);
    REQUIRE(by_cudart.size() == 1);
    CHECK(by_cudart.front()->version == v("13.0.2"));
    // nvcc 13.0.88 shipped in two updates: both are candidates.
    auto by_nvcc = find_cuda_by_components(reg, std::nullopt, v("13.0.88"));
    REQUIRE(by_nvcc.size() == 2);
    CHECK(by_nvcc[0]->version == v("13.0.1"));
    CHECK(by_nvcc[1]->version == v("13.0.2"));
    auto old = find_cuda_by_components(reg, v("11.8.89"), v("11.8.89"));
    REQUIRE(old.size() == 1);
    CHECK(old.front()->version == v("11.8.0"));
    CHECK(find_cuda_by_components(reg, v("13.0.97"), std::nullopt).empty());
    CHECK(find_cuda_by_components(reg, std::nullopt, std::nullopt).empty());

    // Where the real wheel-assembled toolkit exists, its dist-info names lead to 13.0.2 too.
    const fs::path dist = "/usr/local/cuda-13.0/dist-info";
    std::error_code ec;
    if (fs::is_directory(dist, ec)) {
        std::optional<Version> cudart, nvcc;
        const std::regex re(R"(nvidia_cuda_(runtime|nvcc)-([0-9.]+)\.dist-info)");
        for (const auto& e : fs::directory_iterator(dist)) {
            std::smatch m;
            std::string name = e.path().filename().string();
            if (!std::regex_match(name, m, re)) continue;
            (m[1] == "runtime" ? cudart : nvcc) = parse_version(m[2].str(), 3, 4);
        }
        REQUIRE(cudart);
        REQUIRE(nvcc);
        auto found = find_cuda_by_components(reg, cudart, nvcc);
        REQUIRE(found.size() == 1);
        CHECK(found.front()->version.has_prefix(v("13.0")));
    } else {
        WARN("no /usr/local/cuda-13.0/dist-info here; the wheel-assembled toolkit check did not "
             "run");
    }
}

TEST_CASE("cuDNN library sets per major and platform", "[registry]") {
    const Registry& reg = real_registry();
    auto l9 = cudnn_library_names(reg, 9, Platform::Linux);
    REQUIRE(l9.size() == 8);
    CHECK(l9.front() == "libcudnn.so.9");
    for (const char* n :
         {"libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9", "libcudnn_graph.so.9",
          "libcudnn_heuristic.so.9", "libcudnn_engines_precompiled.so.9",
          "libcudnn_engines_runtime_compiled.so.9"})
        CHECK(std::find(l9.begin(), l9.end(), n) != l9.end());
    auto w9 = cudnn_library_names(reg, 9, Platform::Windows);
    CHECK(w9.front() == "cudnn64_9.dll");
    CHECK(std::find(w9.begin(), w9.end(), "cudnn_ops64_9.dll") != w9.end());

    // The seven DLLs of cudnn-11.2-windows-x64-v8.1.0.77.zip.
    auto w8 = cudnn_library_names(reg, 8, Platform::Windows);
    std::set<std::string> w8set(w8.begin(), w8.end());
    CHECK(w8set == std::set<std::string>{"cudnn64_8.dll", "cudnn_adv_infer64_8.dll",
                                         "cudnn_adv_train64_8.dll", "cudnn_cnn_infer64_8.dll",
                                         "cudnn_cnn_train64_8.dll", "cudnn_ops_infer64_8.dll",
                                         "cudnn_ops_train64_8.dll"});
    auto l8 = cudnn_library_names(reg, 8, Platform::Linux);
    CHECK(std::find(l8.begin(), l8.end(), "libcudnn_ops_infer.so.8") != l8.end());

    CHECK(cudnn_library_names(reg, 7, Platform::Windows) ==
          std::vector<std::string>{"cudnn64_7.dll"});
    CHECK(cudnn_library_names(reg, 6, Platform::Linux).empty());
    CHECK(cudnn_library_file(9, "graph", Platform::Windows) == "cudnn_graph64_9.dll");
}

TEST_CASE("framework builds", "[registry]") {
    const Registry& reg = real_registry();
    const FrameworkRelease* t21 = find_framework(reg, "torch", v("2.1.2"));
    REQUIRE(t21);
    CHECK(t21->name == "pytorch");
    CHECK(t21->bundles_cudnn);
    const FrameworkBuild* cu118 = find_framework_build(*t21, std::string_view("cu118"));
    const FrameworkBuild* cu121 = find_framework_build(*t21, v("12.1"));
    REQUIRE(cu118);
    REQUIRE(cu121);
    CHECK(cu118->cudnn.has_prefix(v("8.7")));
    CHECK(cu121->cudnn.has_prefix(v("8.9")));
    CHECK_FALSE(find_framework_build(*t21, v("12.4")));

    const FrameworkRelease* t211 = find_framework(reg, "PyTorch", v("2.11.0"));
    REQUIRE(t211);
    const FrameworkBuild* cu130 = find_framework_build(*t211, std::string_view("cu130"));
    REQUIRE(cu130);
    CHECK(cu130->cudnn == v("9.19.0.56"));
    // 2.1 must not answer for 2.11.
    CHECK(find_framework(reg, "pytorch", v("2.11"))->version == v("2.11"));

    for (const char* text : {"2.5.0", "2.6.2", "2.7.4", "2.8.0", "2.9.3", "2.10.1", "2.11.0"}) {
        INFO("tensorflow " << text);
        const FrameworkRelease* tf = find_framework(reg, "tensorflow", v(text));
        REQUIRE(tf);
        CHECK_FALSE(tf->bundles_cudnn);
        REQUIRE(tf->builds.size() == 1);
        CHECK(tf->builds[0].cuda == v("11.2"));
        CHECK(tf->builds[0].cudnn == v("8.1"));
    }
    CHECK(find_framework(reg, "tensorflow", v("2.10.0"))->windows_gpu);
    CHECK_FALSE(find_framework(reg, "tensorflow", v("2.11.0"))->windows_gpu);
    CHECK_FALSE(find_framework(reg, "jax", v("0.4")));
    CHECK_FALSE(find_framework(reg, "tensorflow", v("3.0")));
    // Every PyTorch release brings its own cuDNN; no TensorFlow release does.
    for (const auto& f : reg.frameworks)
        CHECK(f.bundles_cudnn == (f.name == "pytorch"));
}

TEST_CASE("the embedded registry is the same data", "[registry]") {
    REQUIRE(has_embedded_registry());
    Registry emb = load_embedded_registry();
    const Registry& reg = real_registry();
    CHECK(emb.dir == fs::path("<embedded>"));
    CHECK(emb.cuda.size() == reg.cuda.size());
    CHECK(emb.cudnn.size() == reg.cudnn.size());
    CHECK(emb.frameworks.size() == reg.frameworks.size());
    CHECK(emb.cuda.back().version == reg.cuda.back().version);
}

TEST_CASE("malformed registry files name the file, line and key", "[registry]") {
    TempDir tmp;

    SECTION("TOML syntax error") {
        copy_registry_with(tmp.path, "cuda.toml",
                           "schema = 1\n\n[[release]\nversion = \"11.2.2\"\n");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains((tmp.path / "cuda.toml").string() + ":3"));
    }
    SECTION("a value of the wrong type") {
        copy_registry_with(tmp.path, "cuda.toml",
                           "schema = 1\n[[release]]\nversion = \"11.2.0\"\nsource = \"x\"\n"
                           "driver_linux = 460\n");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains((tmp.path / "cuda.toml").string() + ":5"));
        CHECK_THAT(msg, Catch::Contains("release.driver_linux"));
    }
    SECTION("a malformed version") {
        copy_registry_with(tmp.path, "cudnn.toml",
                           "schema = 1\n\n[[release]]\nversion = \"8.1.0\"\nsource = \"x\"\n"
                           "[[release.build]]\ncuda = \"11.2\"\nsupports = [\"11.0\", \"11.2\"]\n");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains((tmp.path / "cudnn.toml").string() + ":4"));
        CHECK_THAT(msg, Catch::Contains("release.version"));
        CHECK_THAT(msg, Catch::Contains("\"8.1.0\""));
    }
    SECTION("an unknown key, e.g. a typo") {
        copy_registry_with(tmp.path, "frameworks.toml",
                           "schema = 1\n[[framework]]\nname = \"pytorch\"\nversion = \"2.1\"\n"
                           "bundles_cudnn = true\nsource = \"x\"\nbundles_cudn = false\n"
                           "[[framework.build]]\ncuda = \"12.1\"\ncudnn = \"8.9.2.26\"\n");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains((tmp.path / "frameworks.toml").string() + ":7"));
        CHECK_THAT(msg, Catch::Contains("framework.bundles_cudn"));
    }
    SECTION("a missing key is reported at its table") {
        copy_registry_with(tmp.path, "cuda.toml",
                           "schema = 1\n\n\n[[release]]\nversion = \"12.4.1\"\n");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains((tmp.path / "cuda.toml").string() + ":4"));
        CHECK_THAT(msg, Catch::Contains("release.source: missing"));
    }
    SECTION("a release listed twice") {
        copy_registry_with(tmp.path, "cuda.toml",
                           "schema = 1\n[[release]]\nversion = \"12.4.1\"\nsource = \"x\"\n"
                           "[[release]]\nversion = \"12.4.1\"\nsource = \"y\"\n");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains("cuda.toml:5"));
        CHECK_THAT(msg, Catch::Contains("first at line 2"));
    }
    SECTION("an inverted supported range") {
        copy_registry_with(tmp.path, "cudnn.toml",
                           "schema = 1\n[[release]]\nversion = \"8.1.0.77\"\nsource = \"x\"\n"
                           "[[release.build]]\ncuda = \"11.2\"\nsupports = [\"11.2\", \"11.0\"]\n");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains("cudnn.toml:7"));
        CHECK_THAT(msg, Catch::Contains("release.build.supports"));
    }
    SECTION("a schema this cvm does not read") {
        copy_registry_with(tmp.path, "cuda.toml", "schema = 2\n");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains("cuda.toml:1"));
        CHECK_THAT(msg, Catch::Contains("schema"));
    }
    SECTION("a missing file") {
        copy_registry_with(tmp.path, "cuda.toml",
                           read_file(source_tree_registry_dir() / "cuda.toml"));
        fs::remove(tmp.path / "frameworks.toml");
        std::string msg = load_error(tmp.path);
        CHECK_THAT(msg, Catch::Contains((tmp.path / "frameworks.toml").string()));
    }
}

TEST_CASE("where the registry folder is found", "[registry]") {
    TempDir tmp;
    const fs::path prefix = tmp.path / "prefix";
    const fs::path installed = prefix / "share" / "cvm" / "registry";
    write_file(installed / "cuda.toml", "schema = 1\n");
    write_file(prefix / "bin" / "cvm", "");
    const fs::path other = tmp.path / "other";
    write_file(other / "cuda.toml", "schema = 1\n");
    const fs::path empty = tmp.path / "empty";
    fs::create_directories(empty);

    RegistryDirInputs in;
    in.exe_path = prefix / "bin" / "cvm";
    in.source_dir = other;

    SECTION("beside the executable first") {
        auto dir = find_registry_dir(in);
        REQUIRE(dir);
        CHECK(fs::equivalent(*dir, installed));
    }
    SECTION("CVM_REGISTRY_DIR wins") {
        in.env_value = other.string();
        auto dir = find_registry_dir(in);
        REQUIRE(dir);
        CHECK(fs::equivalent(*dir, other));
    }
    SECTION("CVM_REGISTRY_DIR that holds no registry is an error, not a fallback") {
        in.env_value = empty.string();
        try {
            find_registry_dir(in);
            FAIL("accepted an empty CVM_REGISTRY_DIR");
        } catch (const RegistryError& e) {
            CHECK_THAT(std::string(e.what()), Catch::Contains("CVM_REGISTRY_DIR"));
            CHECK_THAT(std::string(e.what()), Catch::Contains(empty.string()));
        }
    }
    SECTION("then the source tree") {
        in.exe_path = empty / "cvm";
        auto dir = find_registry_dir(in);
        REQUIRE(dir);
        CHECK(fs::equivalent(*dir, other));
    }
    SECTION("nothing") {
        in.exe_path = empty / "cvm";
        in.source_dir = empty;
        CHECK_FALSE(find_registry_dir(in));
    }
    SECTION("the build's own source tree holds the real registry") {
        CHECK(fs::is_regular_file(source_tree_registry_dir() / "cuda.toml"));
    }
}

TEST_CASE("how cvm gets a release, and which build --cuda names") {
    // CUDA before 11.4.0 has no manifest: NVIDIA's installer; cuDNN before the manifests: an archive.
    struct CudaRow { const char* version; Fetch how; };
    for (const CudaRow& row : {CudaRow{"11.2.2", Fetch::Installer}, CudaRow{"11.3.1", Fetch::Installer},
                               CudaRow{"11.4.0", Fetch::Manifest}, CudaRow{"12.4.1", Fetch::Manifest}}) {
        INFO(row.version);
        const CudaRelease* r = find_cuda_release(real_registry(), v(row.version));
        REQUIRE(r);
        CHECK(how_fetched(*r) == row.how);
    }
    const CudnnRelease* old = find_cudnn_release(real_registry(), v("8.1.0.77"));
    const CudnnRelease* redist = find_cudnn_release(real_registry(), v("8.9.7.29"));
    REQUIRE(old);
    REQUIRE(redist);
    CHECK(how_fetched(*old) == Fetch::Archive);
    CHECK(how_fetched(*redist) == Fetch::Manifest);
    CHECK(std::string(fetch_name(Fetch::Archive)) == "archive");

    CudnnBuild per_minor;
    per_minor.cuda = v("11.2");
    CudnnBuild per_major;
    per_major.cuda = v("12");
    struct Row { const CudnnBuild* build; const char* cuda; bool is_for; };
    for (const Row& row : {Row{&per_minor, "11.2", true}, Row{&per_minor, "11", true}, Row{&per_minor, "11.8", false},
                           Row{&per_minor, "12", false}, Row{&per_major, "12", true}, Row{&per_major, "12.4", true},
                           Row{&per_major, "13", false}, Row{&per_major, "11.8", false}}) {
        INFO(row.build->cuda.str() << " for " << row.cuda);
        CHECK(cudnn_build_is_for(*row.build, v(row.cuda)) == row.is_for);
    }
}
