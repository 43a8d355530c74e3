// Which release an install names, decided from the real registry before the network: tables of
// requests and the choice, or the refusal's code and words.
#include <catch2/catch.hpp>

#include <string>

#include "spec/spec.h"
#include "install/error.h"
#include "install/installer_package.h"
#include "install/release_choice.h"
#include "registry/registry.h"
#include "registry_support.h"
#include "test_util.h"

using namespace cvm;
using namespace cvm::install;
using cvm::test::real_registry;

namespace {

Version V(const std::string& text) {
    auto v = parse_version(text, 1, 4);
    REQUIRE(v);
    return *v;
}

// Runs `f`; returns "" when it does not throw, else "CODE: message".
template <class F> std::string refusal(F f) {
    try {
        f();
    } catch (const InstallError& e) {
        CHECK(e.exit_code() == 2); // decided before the network: bad input, never an operation
        return e.code() + ": " + e.what();
    }
    return {};
}

// `expected` empty: accepted; else the refusal starts with it.
void check_refusal(const std::string& refused, const char* expected) {
    if (*expected == 0) CHECK(refused.empty());
    else CHECK(refused.rfind(expected, 0) == 0);
}

} // namespace

TEST_CASE("a toolkit version names the newest release cvm can fetch, or is refused at once") {
    struct Row {
        const char* requested;
        const char* version;  // the choice, when accepted
        const char* manifest;
        const char* refusal;  // "code: start of the message", when refused
    };
    const Row rows[] = {
        {"12.4", "12.4.1", "redistrib_12.4.1.json", ""},
        {"12.4.0", "12.4.0", "redistrib_12.4.0.json", ""},
        {"11.4", "11.4.4", "redistrib_11.4.4.json", ""},
        // Before the manifests: NVIDIA's local installer (checked in the test below).
        {"11.2", "11.2.2", "", ""},
        {"11.2.2", "11.2.2", "", ""},
        {"11.2.1", "11.2.1", "", ""},
        // 10.1.168 has no installer name from a public source; 11.1 means 11.1.1.
        {"10.1.168", "", "", "not_installable: CUDA 10.1.168 has no redistributable manifest"},
        {"11.1.0", "11.1.0", "", ""},
        {"11.1", "11.1.1", "", ""},
        {"10.9", "", "", "not_found: CUDA 10.9 is not in cvm's release list"},
        {"12.4.9", "12.4.9", "redistrib_12.4.9.json", ""}, // unknown full version: tried as given
    };
    for (const Row& row : rows) {
        INFO(row.requested);
        std::string refused = refusal([&] {
            ToolkitChoice c = choose_toolkit(&real_registry(), V(row.requested));
            CHECK(c.version.str() == row.version);
            CHECK(c.manifest == row.manifest);
        });
        check_refusal(refused, row.refusal);
    }
    // The installer is the host's, with the registry's SHA-256 where a public source gives one.
    ToolkitChoice linux = choose_toolkit(&real_registry(), V("11.2"), "linux-x86_64");
    CHECK(linux.installer == "cuda_11.2.2_460.32.03_linux.run");
    CHECK(linux.installer_sha256.empty());
    ToolkitChoice windows = choose_toolkit(&real_registry(), V("11.2"), "windows-x86_64");
    CHECK(windows.installer == "cuda_11.2.2_461.33_win10.exe");
    ToolkitChoice old = choose_toolkit(&real_registry(), V("10.2"), "linux-x86_64");
    CHECK(old.version.str() == "10.2.89");
    CHECK(old.installer == "cuda_10.2.89_440.33.01_linux.run");
    CHECK(old.installer_sha256.size() == 64);
    CHECK(old.installer_source.find("nixpkgs") != std::string::npos);
    CHECK(choose_toolkit(&real_registry(), V("12.4")).installer.empty());
    // Without a registry: full versions only, as given.
    CHECK(choose_toolkit(nullptr, V("11.2.2")).manifest == "redistrib_11.2.2.json");
    CHECK(refusal([] { choose_toolkit(nullptr, V("12")); }).rfind("not_found: ", 0) == 0);
}

TEST_CASE("a cuDNN version and --cuda are checked against the registry's builds") {
    struct Row {
        const char* version;
        const char* cuda;
        const char* manifest;
        const char* refusal;
    };
    const Row rows[] = {
        {"8.9", "12", "redistrib_8.9.7.json", ""},
        {"8.9.7.29", "11.8", "redistrib_8.9.7.json", ""},
        {"8.9", "", "redistrib_8.9.7.json", ""}, // the manifest's variants decide later
        {"8.9", "13", "",
         "not_found: cuDNN 8.9.7.29 has no build for CUDA 13 (its builds are for CUDA 11, 12)"},
        {"9.1.0", "10", "", "not_found: cuDNN 9.1.0.70 has no build for CUDA 10"},
        // Legacy releases go to StoreInstaller::install_legacy_cudnn before this is asked.
        {"8.1.0.77", "11.2", "",
         "not_installable: cuDNN 8.1.0.77 predates NVIDIA's manifests; run `cvm install "
         "cudnn 8.1.0.77 --cuda 11.2`"},
        {"8.1", "", "", "not_installable: cuDNN 8.1.1.33 predates"},
        {"1.2", "", "", "not_found: cuDNN 1.2 is not in cvm's release list"},
        {"9.99.1", "12", "redistrib_9.99.1.json", ""},
    };
    for (const Row& row : rows) {
        INFO(row.version << " --cuda " << row.cuda);
        std::string refused = refusal([&] {
            std::string manifest = choose_cudnn_manifest(&real_registry(), V(row.version), row.cuda, "linux-x86_64");
            CHECK(manifest == row.manifest);
        });
        check_refusal(refused, row.refusal);
    }
}

TEST_CASE("a spec's cuDNN is chosen for its toolkit before anything is fetched") {
    struct Row {
        const char* spec;
        const char* toolkit;
        const char* choice; // "version cuda"
        const char* refusal;
    };
    const Row rows[] = {
        {"12.4+9.1.0", "12.4.1", "9.1.0.70 12", ""},
        {"11.8+8.9", "11.8.0", "8.9.7.29 11", ""},
        {"12.4+8.9.7.29-cuda12", "12.2.2", "8.9.7.29 12", ""},
        {"13+8.9", "13.0.0", "", "not_found: no cuDNN 8.9 in cvm's release list supports CUDA 13.0.0"},
        {"12.4+8.1", "12.4.1", "", "not_found: no cuDNN 8.1 in cvm's release list supports CUDA 12.4.1"},
        {"11.2+8.1.0.77", "11.2.2", "8.1.0.77 11.2", ""}, // a legacy archive
        {"11.4+8.2", "11.4.4", "8.2.4.15 11.4", ""},
        {"10.2+8", "10.2.89", "8.7.0.84 10", ""},
        {"11.8+8.1", "11.8.0", "",
         "not_found: no cuDNN 8.1 in cvm's release list supports CUDA 11.8.0; builds that do: 8.9.7.29-cuda11, "
         "8.9.6.50-cuda11,"},
        {"11.8+8.1.0.77-cuda11.2", "11.8.0", "", "not_found: no cuDNN 8.1.0.77 built for CUDA 11.2 in cvm's release list"},
        {"12.4+1.2", "12.4.1", "none", ""}, // unknown to the registry: the caller tries the version as given
    };
    for (const Row& row : rows) {
        INFO(row.spec);
        Spec spec = parse_spec(row.spec);
        std::string refused = refusal([&] {
            auto c = choose_cudnn_for(&real_registry(), spec, V(row.toolkit), "linux-x86_64");
            CHECK((c ? c->first + " " + c->second : std::string("none")) == row.choice);
        });
        check_refusal(refused, row.refusal);
    }
}

TEST_CASE("NVIDIA's md5sum.txt: the MD5 of one installer") {
    const std::string text = "6b4d2a0d1e6d1f09f1b0b1a5c37ec1f7  cuda_11.2.2_461.33_win10.exe\n"
                             "0d3f5a1b2c3d4e5f60718293a4b5c6d7 *cuda_11.2.2_460.32.03_linux.run\r\n"
                             "not-an-md5  cuda_11.2.2_460.32.03_linux_ppc64le.run\n";
    CHECK(md5_listed_for(text, "cuda_11.2.2_460.32.03_linux.run") == "0d3f5a1b2c3d4e5f60718293a4b5c6d7");
    CHECK(md5_listed_for(text, "cuda_11.2.2_461.33_win10.exe") == "6b4d2a0d1e6d1f09f1b0b1a5c37ec1f7");
    CHECK(md5_listed_for(text, "cuda_11.2.2_460.32.03_linux_ppc64le.run").empty());
    CHECK(md5_listed_for(text, "cuda_11.2.2").empty());
    CHECK(md5_listed_for("", "x.run").empty());
}
