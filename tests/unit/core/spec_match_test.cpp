// How a spec matches toolkits, cuDNN and NCCL builds (spec/spec_match.h), one table per part:
// the one matcher resolution, install, `cvm use` and the solver ask.
#include <catch2/catch.hpp>

#include "spec/spec_match.h"
#include "version_support.h"

using namespace cvm;
using cvm::test::v;

TEST_CASE("spec matcher: the toolkit part") {
    struct Row {
        const char* spec;
        const char* id;
        const char* release;
        bool matches;
    };
    const Row rows[] = {
        {"12", "12.4.1", "12.4.1", true},
        {"12.4", "12.4.1", "12.4.1", true},
        {"12.4", "12.40.0", "12.40.0", false}, // a prefix at a number, not at a digit
        {"12.4.1", "12.4.1", "12.4.1", true},
        {"12.4.1", "12.4.10", "12.4.10", false},
        {"11", "12.4.1", "12.4.1", false},
        {"11.8", "deb-11.8", "11.8.0", false}, // numbers never select a named toolkit
        {"deb-11.8", "deb-11.8", "11.8.0", true},
        {"deb-11.8", "11.8.0", "11.8.0", false}, // a name never selects a release
        {"deb", "deb-11.8", "11.8.0", false},   // nor is a name a prefix
        {"deb-11.8+9", "deb-11.8", "11.8.0", true},
        {"12+9+nccl2.21", "12.4.1", "12.4.1", true},
    };
    for (const auto& r : rows) {
        INFO(r.spec << " / " << r.id);
        CHECK(toolkit_matches(parse_spec(r.spec), r.id, v(r.release)) == r.matches);
    }
    CHECK_FALSE(toolkit_matches(parse_spec("system"), "12.4.1", v("12.4.1")));
    CHECK(toolkit_release_matches(parse_spec("12"), v("12.8.1")));
    CHECK_FALSE(toolkit_release_matches(parse_spec("deb-11.8"), v("11.8.0")));
}

TEST_CASE("spec matcher: the cuDNN part, and which build serves which toolkit") {
    struct Row {
        const char* spec;
        const char* build;
        const char* toolkit;
        bool matches;
        bool fits;
    };
    const Row rows[] = {
        {"12+9", "9.1.0.70-cuda12", "12.4.1", true, true},
        {"12+9.1", "9.1.0.70-cuda12", "12.4.1", true, true},
        {"12+9.1.0.70", "9.1.0.70-cuda12", "12.4.1", true, true},
        {"12+9.10", "9.1.0.70-cuda12", "12.4.1", false, false},
        {"12+9", "9.1.0.70-cuda11", "12.4.1", true, false},        // built for another major
        {"11.2+8.1", "8.1.0.77-cuda11.2", "11.2.2", true, true},    // per-minor builds
        {"11.2+8.1", "8.1.0.77-cuda11.2", "11.4.0", true, false},   // serve their minor only
        {"11+8.1-cuda11.2", "8.1.0.77-cuda11.2", "11.2.0", true, true},
        {"11+8.1-cuda11", "8.1.0.77-cuda11.2", "11.2.0", false, false}, // -cudaX is exact for cuDNN
        {"12", "9.1.0.70-cuda12", "12.4.1", false, false},          // no cuDNN part: nothing matches
        {"deb-11.8+8.9", "8.9.7.29-cuda11", "11.8.0", true, true},
    };
    for (const auto& r : rows) {
        INFO(r.spec << " / " << r.build << " / " << r.toolkit);
        Spec s = parse_spec(r.spec);
        CudnnId b = *parse_cudnn_id(r.build);
        CHECK(cudnn_matches(s, b) == r.matches);
        CHECK(cudnn_fits(s, b, v(r.toolkit)) == r.fits);
    }
    // Exactly as written first (an import recorded as 9.19.0), then the newest, then the newest CUDA.
    Spec s = parse_spec("12+9.19.0");
    CHECK(cudnn_before(s, *parse_cudnn_id("9.19.0-cuda12"), *parse_cudnn_id("9.19.0.56-cuda12")));
    Spec any = parse_spec("12+9");
    CHECK(cudnn_before(any, *parse_cudnn_id("9.19.0.56-cuda12"), *parse_cudnn_id("9.19.0-cuda12")));
    CHECK(cudnn_before(any, *parse_cudnn_id("8.9.7.29-cuda12"), *parse_cudnn_id("8.9.7.29-cuda11")));
    CHECK_FALSE(cudnn_before(any, *parse_cudnn_id("9.1.0.70-cuda12"), *parse_cudnn_id("9.1.0.70-cuda12")));
}

TEST_CASE("spec matcher: the NCCL part and the build chosen for a toolkit") {
    struct Row {
        const char* spec;
        const char* build;
        bool matches;
    };
    const Row rows[] = {
        {"12+nccl2", "2.21.5-cuda12.4", true},
        {"12+nccl2.21", "2.21.5-cuda12.4", true},
        {"12+nccl2.2", "2.21.5-cuda12.4", false},
        {"12+nccl2.21-cuda12", "2.21.5-cuda12.4", true}, // -cudaX prefixes the build's CUDA
        {"12+nccl2.21-cuda12.2", "2.21.5-cuda12.4", false},
        {"12+9", "2.21.5-cuda12.4", false},
    };
    for (const auto& r : rows) {
        INFO(r.spec << " / " << r.build);
        CHECK(nccl_matches(parse_spec(r.spec), *parse_nccl_id(r.build)) == r.matches);
    }
    std::vector<NcclId> builds;
    for (const char* id : {"2.21.5-cuda12.4", "2.21.5-cuda12.2", "2.26.2-cuda12.8", "2.21.5-cuda11.0", "2.28.9-cuda13"})
        builds.push_back(*parse_nccl_id(id));
    auto pick = [&](const char* spec, const char* toolkit) -> std::string {
        int i = pick_nccl(parse_spec(spec), builds, v(toolkit));
        return i < 0 ? "none" : builds[static_cast<size_t>(i)].str();
    };
    // No newer CUDA minor than the toolkit's first, then the newest release, then the closest minor.
    CHECK(pick("12+nccl2", "12.4.1") == "2.21.5-cuda12.4");
    CHECK(pick("12+nccl2", "12.9.0") == "2.26.2-cuda12.8");
    CHECK(pick("12+nccl2", "12.3.0") == "2.21.5-cuda12.2");
    CHECK(pick("12+nccl2", "12.0.0") == "2.26.2-cuda12.8"); // none fits the minor: the newest
    CHECK(pick("12+nccl2.21.5", "12.9.0") == "2.21.5-cuda12.4"); // exactly as written first
    CHECK(pick("11+nccl2", "11.8.0") == "2.21.5-cuda11.0");
    CHECK(pick("13+nccl2", "13.0.2") == "2.28.9-cuda13");
    CHECK(pick("13+nccl2.21", "13.0.2") == "none");
}
