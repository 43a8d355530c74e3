// Legacy cuDNN: the archive of a build, its place in NVIDIA's public folder, the shipped
// checksum table, and the first-use record's file format.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "install/error.h"
#include "install/first_use.h"
#include "install/legacy_cudnn.h"
#include "platform/platform.h"
#include "registry/registry.h"
#include "test_util.h"

using namespace cvm;
using namespace cvm::install;

namespace {

const registry::CudnnRelease& release(const std::string& v) {
    auto* r = registry::find_cudnn_release(install::test::real_registry(), *parse_version(v, 1, 4));
    REQUIRE(r != nullptr);
    return *r;
}

// "CODE: message" of an InstallError `f` throws; "" when it throws none.
template <class F> std::string refusal_of(F f) {
    try {
        f();
    } catch (const InstallError& e) {
        return e.code() + ": " + e.what();
    }
    return {};
}

} // namespace

TEST_CASE("a legacy archive lies in its release's folder of NVIDIA's public redist tree") {
    CHECK(legacy_archive_path("8.1.0.77", "cudnn-11.2-linux-x64-v8.1.0.77.tgz") ==
          "redist/cudnn/v8.1.0/cudnn-11.2-linux-x64-v8.1.0.77.tgz");
    CHECK(legacy_archive_path("7.6.5.32", "cudnn-10.2-windows10-x64-v7.6.5.32.zip") ==
          "redist/cudnn/v7.6.5/cudnn-10.2-windows10-x64-v7.6.5.32.zip");
    CHECK(legacy_archive_path("8.3.3.40", "cudnn-linux-x86_64-8.3.3.40_cuda11.5-archive.tar.xz") ==
          "redist/cudnn/v8.3.3/local_installers/11.5/cudnn-linux-x86_64-8.3.3.40_cuda11.5-archive.tar.xz");
}

TEST_CASE("the archive of a legacy build is chosen by CUDA and platform, or refused with the builds there are") {
    auto a = choose_legacy_archive(release("8.1.0.77"), "11.2", "linux-x86_64");
    CHECK(a.name == "cudnn-11.2-linux-x64-v8.1.0.77.tgz");
    CHECK(a.build->cuda.str() == "11.2");
    a = choose_legacy_archive(release("8.1.0.77"), "11.2", "windows-x86_64");
    CHECK(a.path == "redist/cudnn/v8.1.0/cudnn-11.2-windows-x64-v8.1.0.77.zip");
    // --cuda 11 fits the newest 11.x variant.
    CHECK(choose_legacy_archive(release("8.0.5.39"), "11", "linux-x86_64").name == "cudnn-11.1-linux-x64-v8.0.5.39.tgz");
    // cuDNN 7's Windows 10 zip comes first.
    CHECK(choose_legacy_archive(release("7.6.5.32"), "10.2", "windows-x86_64").name ==
          "cudnn-10.2-windows10-x64-v7.6.5.32.zip");
    CHECK(refusal_of([] { choose_legacy_archive(release("8.1.0.77"), "12", "linux-x86_64"); })
              .rfind("not_found: cuDNN 8.1.0.77 has no build for CUDA 12 (its builds are for CUDA "
                     "10.2, 11.2)",
                     0) == 0);
    CHECK(refusal_of([] { choose_legacy_archive(release("8.1.0.77"), "", "linux-x86_64"); })
              .rfind(
                  "not_found: cuDNN 8.1.0.77 has builds for CUDA 10.2, 11.2; say which with --cuda",
                  0) == 0);
    CHECK(refusal_of([] {
              choose_legacy_archive(release("8.1.0.77"), "11.2", "linux-sbsa");
          }).rfind("not_installable: cuDNN 8.1.0.77 predates NVIDIA's manifests", 0) == 0);
}

TEST_CASE("the shipped checksum table names only archives the registry knows, each with a source") {
    auto sums = parse_known_archive_sums(
        *platform::read_file(registry::source_tree_registry_dir() / "cudnn_archives.toml"), "cudnn_archives.toml");
    REQUIRE(sums.size() >= 10);
    std::set<std::string> names;
    for (const auto& r : install::test::real_registry().cudnn)
        if (registry::how_fetched(r) == registry::Fetch::Archive)
            for (const auto& b : r.builds) {
                names.insert(b.linux_archives.begin(), b.linux_archives.end());
                names.insert(b.windows_archives.begin(), b.windows_archives.end());
            }
    for (const auto& [name, sum] : sums) {
        INFO(name);
        CHECK(names.count(name) == 1);
        CHECK(!sum.source.empty());
    }
    CHECK(sums.at("cudnn-11.4-linux-x64-v8.2.4.15.tgz").sha256 ==
          "0e5d2df890b9967efa6619da421310d97323565a79f05a1a8cb9b7165baad0d7");
    // What the binary falls back to is the same table.
    CHECK(load_known_archive_sums().size() == sums.size());
}

TEST_CASE("a malformed checksum table is refused with its file and line") {
    CHECK(refusal_of([] {
              parse_known_archive_sums("[[archive]]\nname = \"a.tgz\"\nsha256 = \"ABC\"\n",
                                       "t.toml");
          }).rfind("registry: t.toml:1: a.tgz: sha256 must be 64 lower-case hex digits", 0) == 0);
    std::string sum(64, 'a');
    std::string row = "[[archive]]\nname = \"a.tgz\"\nsha256 = \"" + sum + "\"\n";
    CHECK(refusal_of([&] {
              parse_known_archive_sums(row + row, "t.toml");
          }).find("a.tgz: listed twice") != std::string::npos);
    CHECK(parse_known_archive_sums(row + "size = 12\n", "t.toml").at("a.tgz").size == 12);
}

TEST_CASE("first-use records read back as written; a malformed one names its line") {
    FirstUseRecord r{"cudnn-11.2-windows-x64-v8.1.0.77.zip", std::string(64, 'b'), 123456,
                     "https://example.test/a \"quoted\" path", "2026-12-01T04:30:00Z"};
    auto back = parse_first_use(format_first_use({r, r}), "first-use.toml");
    REQUIRE(back.size() == 2);
    CHECK(back[1].name == r.name);
    CHECK(back[1].sha256 == r.sha256);
    CHECK(back[1].size == r.size);
    CHECK(back[1].url == r.url);
    CHECK(back[1].first_use == r.first_use);
    // Control characters (DEL included) are escaped, so they read back too.
    FirstUseRecord odd{"a\x7f\tb\\c.zip", std::string(64, 'c'), 1, "https://example.test/\x01\n",
                       ""};
    auto odd_back = parse_first_use(format_first_use({odd}), "first-use.toml");
    REQUIRE(odd_back.size() == 1);
    CHECK(odd_back[0].name == odd.name);
    CHECK(odd_back[0].url == odd.url);
    CHECK(refusal_of([] {
              parse_first_use("[[archive]]\nname = \"x\"\nsha256 = \"" + std::string(64, 'c') +
                                  "\"\n",
                              "f.toml");
          }).rfind("first_use: f.toml:1: x: size must be a positive number", 0) == 0);
    CHECK(refusal_of([] {
              parse_first_use("[[archive\n", "f.toml");
          }).rfind("first_use: f.toml:1: ", 0) == 0);
}

TEST_CASE("a first-use record is added once; the first one stays") {
    namespace fs = std::filesystem;
    cvm::test::TempDir tmp("first-use");
    const fs::path& dir = tmp.path;
    fs::path file = dir / "registry" / "first-use.toml";
    CHECK(read_first_use(file).empty());
    FirstUseRecord a{"a.zip", std::string(64, 'a'), 1, "", ""};
    FirstUseRecord b{"a.zip", std::string(64, 'b'), 2, "", ""};
    CHECK(record_first_use(file, dir / "locks", a).sha256 == a.sha256);
    CHECK(record_first_use(file, dir / "locks", b).sha256 == a.sha256);
    REQUIRE(find_first_use(file, "a.zip"));
    CHECK(find_first_use(file, "a.zip")->size == 1);
    CHECK(!find_first_use(file, "b.zip"));
}
