#include "registry/nccl.h"
#include "registry/registry.h"

#include <catch2/catch.hpp>

using namespace cvm;
using namespace cvm::registry;

TEST_CASE("the shipped NCCL registry parses: every build names its archive as NVIDIA does",
          "[registry][nccl]") {
    auto releases = load_nccl_releases();
    REQUIRE(releases.size() >= 10);
    for (size_t i = 1; i < releases.size(); ++i)
        CHECK(releases[i - 1].version < releases[i].version);
    for (const auto& r : releases) {
        INFO(r.version.str());
        CHECK_FALSE(r.source.empty());
        CHECK_FALSE(r.builds.empty());
        for (const auto& b : r.builds) {
            const NcclArchive* a = b.archive_for("linux-x86_64");
            REQUIRE(a);
            CHECK(a->name.rfind("nccl_" + r.version.str() + "-", 0) == 0);
            CHECK(a->name.find("+cuda" + b.cuda.str() + "_x86_64.txz") != std::string::npos);
        }
    }
    // The examples: 2.21 for CUDA 12.4, 2.28 for CUDA 13.0.
    const NcclRelease* r221 = find_nccl_release(releases, Version{{2, 21}});
    REQUIRE(r221);
    CHECK(r221->version.str() == "2.21.5");
    CHECK(choose_nccl_build(*r221, Version{{12}})->cuda.str() == "12.4");
    const NcclRelease* r228 = find_nccl_release(releases, Version{{2, 28}});
    REQUIRE(r228);
    const NcclBuild* b13 = choose_nccl_build(*r228, Version{{13, 0}});
    REQUIRE(b13);
    CHECK(b13->archive_for("linux-x86_64")->sha256.size() == 64);
    CHECK_FALSE(b13->sha256_source.empty());
    CHECK(b13->archive_for("linux-sbsa")->name == "nccl_2.28.9-1+cuda13.0_aarch64.txz");
    CHECK_FALSE(choose_nccl_build(*r228, Version{{11}}));
    CHECK(find_nccl_release(releases, Version{{2}})->version == releases.back().version);
    CHECK_FALSE(find_nccl_release(releases, Version{{3}}));
    // Old releases live in folders of their own names (v2.5.6) with revision 2.
    CHECK(find_nccl_release(releases, Version{{2, 5, 6}})->folder == "v2.5.6");
    CHECK(conventional_nccl_archive(Version{{2, 23, 4}}, Version{{12, 6}}, "linux-x86_64") ==
          "nccl_2.23.4-1+cuda12.6_x86_64.txz");
}

TEST_CASE("a malformed NCCL registry is refused with the file and line", "[registry][nccl]") {
    auto bad = [](const std::string& text) {
        try {
            parse_nccl_releases(text, "nccl.toml");
        } catch (const RegistryError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(bad("[[release]]\nversion = \"2.21\"\n")
              .find("nccl.toml:1: release: version must be X.Y.Z") == 0);
    CHECK(bad("[[release]]\nversion = \"2.21.5\"\n").find("no [[release.build]]") !=
          std::string::npos);
    CHECK(bad("[[release]]\nversion = \"2.21.5\"\n[[release.build]]\ncuda = \"12.4\"\n"
              "linux_x86_64 = \"nccl_2.21.4-1+cuda12.4_x86_64.txz\"\n")
              .find("not NCCL 2.21.5 for CUDA 12.4") != std::string::npos);
    CHECK(
        bad("[[release]]\nversion = \"2.21.5\"\n[[release.build]]\ncuda = \"12.4\"\n"
            "linux_x86_64 = \"nccl_2.21.5-1+cuda12.4_x86_64.txz\"\nlinux_x86_64_sha256 = \"ABC\"\n")
            .find("64 lower-case hex") != std::string::npos);
    CHECK(bad("[[release]]\nversion = \"2.21.5\"\nfolder = \"../x\"\n[[release.build]]\ncuda = "
              "\"12.4\"\n")
              .find("folder must be one folder name") != std::string::npos);
    CHECK(bad("[[release]]\nversion = \"2.21.5\"\n[[release.build]]\ncuda = \"12.4\"\n"
              "linux_x86_64 = \"nccl_2.21.5-1+cuda12.4_x86_64.txz\"\nlinux_x86_64_sha256 = \"" +
              std::string(64, 'a') + "\"\n")
              .find("a sha256 without sha256_source") != std::string::npos);
    CHECK(bad("[[release]]\nversion = \"2.21.5\"\n[[release.build]]\ncuda = \"12.4\"\n"
              "[[release]]\nversion = \"2.21.5\"\n[[release.build]]\ncuda = \"12.2\"\n")
              .find("listed twice") != std::string::npos);
}
