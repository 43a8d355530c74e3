#include "doctor/variable_checks.h"

#include <catch2/catch.hpp>

using namespace cvm;
using namespace cvm::doctor;

TEST_CASE("doctor: CUDA_MODULE_LOADING=EAGER is noted, other values are not",
          "[doctor][variables]") {
    std::map<std::string, std::string> env{{"CUDA_MODULE_LOADING", "EAGER"}};
    auto found = variable_findings(env, platform::Os::Linux);
    REQUIRE(found.size() == 1);
    CHECK(found[0].code == "cuda-module-loading-eager");
    CHECK(found[0].severity == Severity::note);
    CHECK(found[0].message.find("CUDA_MODULE_LOADING=EAGER is set") != std::string::npos);
    CHECK(found[0].fix.find("unset CUDA_MODULE_LOADING") != std::string::npos);

    env["CUDA_MODULE_LOADING"] = "eager"; // CUDA reads it without case
    CHECK(variable_findings(env, platform::Os::Linux).size() == 1);
    env["CUDA_MODULE_LOADING"] = "LAZY";
    CHECK(variable_findings(env, platform::Os::Linux).empty());
    CHECK(variable_findings({}, platform::Os::Linux).empty());
    // Windows names variables without case.
    CHECK(variable_findings({{"Cuda_Module_Loading", "EAGER"}}, platform::Os::Windows).size() == 1);
    CHECK(variable_findings({{"Cuda_Module_Loading", "EAGER"}}, platform::Os::Linux).empty());
}
