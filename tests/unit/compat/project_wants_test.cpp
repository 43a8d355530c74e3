// From pins to the solver's wants (compat/project_wants.h) over the shipped registry: the
// candidates of exact pins, ranges and bare names, the one-line refusals, and choose_newest's
// pick of the newest release a machine's driver runs, naming the newer ones passed over.
#include <catch2/catch.hpp>

#include "compat/project_wants.h"

using namespace cvm;
using namespace cvm::compat;

namespace {

struct WantTables {
    registry::Registry reg = registry::load_default_registry();
    HostCompilerTable compilers = load_host_compiler_table();
    std::vector<GpuArchRow> archs = load_gpu_arch_table();
    Knowledge know() const { return {&reg, &compilers, &archs}; }
};
const WantTables& want_tables() {
    static WantTables t;
    return t;
}

// The candidates' versions, newest first, with the first one's built CUDA.
std::string candidates(const std::string& requirements) {
    auto got = project_wants(want_tables().reg, requirements_pins(requirements, "requirements.txt"));
    std::string out;
    for (const auto& ch : got.choices)
        for (const auto& w : ch.candidates)
            out += (out.empty() ? "" : " ") + w.version.str() +
                   (w.built_cuda ? "/cu" + w.built_cuda->str() : std::string());
    return out;
}

std::string refusal(const std::string& requirements) {
    try {
        project_wants(want_tables().reg, requirements_pins(requirements, "requirements.txt"));
    } catch (const FrameworkInputError& e) {
        return e.what();
    }
    return "(accepted)";
}

} // namespace

TEST_CASE("project pins become candidates, newest first") {
    CHECK(candidates("torch==2.4.1\n") == "2.4.1");
    CHECK(candidates("torch==2.4.1+cu121\n") == "2.4.1/cu12.1");
    CHECK(candidates("torch>=2.4,<2.6\n") == "2.5 2.4");
    CHECK(candidates("torch>=2.9\ntorch<2.11\n") == "2.10 2.9");
    CHECK(candidates("tensorflow~=2.15.0\n") == "2.15");
    // A conda CUDA keeps the releases that ship a build for it.
    auto pins = environment_pins("dependencies:\n  - pytorch>=2.3\n  - pytorch-cuda=12.1\n", "environment.yml");
    auto got = project_wants(want_tables().reg, pins);
    std::string versions;
    for (const auto& w : got.choices.at(0).candidates)
        versions += (versions.empty() ? "" : " ") + w.version.str() + "/cu" + w.built_cuda->str();
    CHECK(versions == "2.5/cu12.1 2.4/cu12.1 2.3/cu12.1");
}

TEST_CASE("project pins that cannot be matched are refused in one line") {
    CHECK(refusal("torch==3.1\n").rfind("torch==3.1 from requirements.txt:1: torch 3.1 is not in cvm's registry", 0) == 0);
    CHECK(refusal("torch>=3\n") == "torch>=3 from requirements.txt:1: cvm's registry knows no torch release in this "
                                   "range (it knows 1.7 to 2.11: cvm list --available)");
    CHECK(refusal("torch==2.4.1\ntorch==2.4.0\n") ==
          "torch==2.4.1 from requirements.txt:1 and torch==2.4.0 from requirements.txt:2 admit no common "
          "release; make them agree");
    CHECK(refusal("torch==2.4.1+cpu\n").find("+cpu is not a CUDA build tag") != std::string::npos);
    CHECK(refusal("torch==2.11+cu121\n") == "torch==2.11+cu121 from requirements.txt:1: torch 2.11 has no +cu121 "
                                            "build (it ships cu130)");
    CHECK(refusal("jax==0.4.30\n").rfind("jax==0.4.30 from requirements.txt:1: cvm's registry has no JAX releases", 0) == 0);
    auto with_jax = project_wants(want_tables().reg, requirements_pins("jax\ntorch==2.5\n", "r.txt"));
    CHECK(with_jax.notes.size() == 1);
}

TEST_CASE("choose_newest takes the newest release the driver runs and names the newer ones") {
    MachineFacts m;
    m.driver = registry::parse_driver_version("535.104.05");
    WantChoices bare;
    REQUIRE(range_choices(want_tables().reg, "torch", bare));
    std::vector<ChoiceLine> lines;
    auto wants = choose_newest({bare}, m, want_tables().know(), lines);
    REQUIRE(wants.size() == 1);
    CHECK(wants[0].version.str() == "2.10");
    REQUIRE(lines.size() == 1);
    REQUIRE(lines[0].passed.size() == 1);
    CHECK(lines[0].passed[0].first == "2.11");
    CHECK(lines[0].text.rfind("--for torch: took torch 2.10, the newest release cvm knows that this machine can "
                              "run; passed over 2.11 (the driver rules it out: driver 535.104.05 is too old for "
                              "CUDA 13.0",
                              0) == 0);
    // Without a driver the newest is taken, nothing passed over.
    lines.clear();
    wants = choose_newest({bare}, MachineFacts{}, want_tables().know(), lines);
    CHECK(wants[0].version.str() == "2.11");
    CHECK(lines[0].passed.empty());
    // NAME==VERSION is not a range: parse_framework_want reads it.
    WantChoices exact;
    CHECK_FALSE(range_choices(want_tables().reg, "torch==2.5", exact));
    CHECK_FALSE(range_choices(want_tables().reg, "tensorflw", exact));
}
