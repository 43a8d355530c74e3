// Which release an install names, decided from the real registry before the network: tables of
// requests and the choice, or the refusal's code and words.
#include <catch2/catch.hpp>

#include <string>

#include "core/spec.h"
#include "install/error.h"
#include "install/release_choice.h"
#include "registry/registry.h"
#include "test_util.h"

using namespace cvm;
using namespace cvm::install;

namespace {

const registry::Registry& real() {
    return test::real_registry();
}

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
        {"11.2", "", "", "not_installable: CUDA 11.2.2 has no redistributable manifest"},
        {"11.2.2", "", "", "not_installable: CUDA 11.2.2 has no redistributable manifest"},
        {"11.2.1", "", "", "not_installable: CUDA 11.2.1 has no redistributable manifest"},
        {"10.9", "", "", "not_found: CUDA 10.9 is not in cvm's release list"},
        {"12.4.9", "12.4.9", "redistrib_12.4.9.json", ""}, // unknown full version: tried as given
    };
    for (const Row& row : rows) {
        INFO(row.requested);
        std::string refused = refusal([&] {
            ToolkitChoice c = choose_toolkit(&real(), V(row.requested));
            CHECK(c.version.str() == row.version);
            CHECK(c.manifest == row.manifest);
        });
        check_refusal(refused, row.refusal);
    }
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
        {"8.9", "13", "", "not_found: cuDNN 8.9.7.29 has no build for CUDA 13 (its builds are for CUDA 11, 12)"},
        {"9.1.0", "10", "", "not_found: cuDNN 9.1.0.70 has no build for CUDA 10"},
        // Legacy releases go to Installer::install_legacy_cudnn before this is asked.
        {"8.1.0.77", "11.2", "", "not_installable: cuDNN 8.1.0.77 predates NVIDIA's manifests; run `cvm install "
                                 "cudnn 8.1.0.77 --cuda 11.2`"},
        {"8.1", "", "", "not_installable: cuDNN 8.1.1.33 predates"},
        {"1.2", "", "", "not_found: cuDNN 1.2 is not in cvm's release list"},
        {"9.99.1", "12", "redistrib_9.99.1.json", ""},
    };
    for (const Row& row : rows) {
        INFO(row.version << " --cuda " << row.cuda);
        std::string refused = refusal([&] {
            std::string manifest = choose_cudnn_manifest(&real(), V(row.version), row.cuda, "linux-x86_64");
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
            auto c = choose_cudnn_for(&real(), spec, V(row.toolkit), "linux-x86_64");
            CHECK((c ? c->first + " " + c->second : std::string("none")) == row.choice);
        });
        check_refusal(refused, row.refusal);
    }
}
