#include <catch2/catch.hpp>

#include "core/spec.h"

using namespace cvm;

TEST_CASE("versions parse, compare and match prefixes") {
    auto v = parse_version("11.2.2");
    REQUIRE(v);
    CHECK(v->str() == "11.2.2");
    CHECK(parse_version("8.1.0.77")->parts.size() == 4);
    CHECK_FALSE(parse_version("8.1.0.77.1"));
    CHECK_FALSE(parse_version(""));
    CHECK_FALSE(parse_version("11."));
    CHECK_FALSE(parse_version(".11"));
    CHECK_FALSE(parse_version("11..2"));
    CHECK_FALSE(parse_version("1a"));
    CHECK_FALSE(parse_version("1234567890")); // too many digits to be a version
    CHECK(*parse_version("11.10") > *parse_version("11.9"));
    CHECK(*parse_version("12") < *parse_version("12.0"));
    CHECK(parse_version("11.2.2")->has_prefix(*parse_version("11.2")));
    CHECK_FALSE(parse_version("11.20.1")->has_prefix(*parse_version("11.2")));
    CHECK_FALSE(parse_version("11")->has_prefix(*parse_version("11.2")));
}

TEST_CASE("toolkit and cuDNN ids") {
    CHECK(parse_toolkit_id("11.2.2"));
    CHECK_FALSE(parse_toolkit_id("11.2"));
    auto id = parse_cudnn_id("8.1.0.77-cuda11.2");
    REQUIRE(id);
    CHECK(id->str() == "8.1.0.77-cuda11.2");
    CHECK(id->serves(*parse_version("11.2.2")));
    CHECK_FALSE(id->serves(*parse_version("11.1.1"))); // per-minor builds: same minor only
    auto major = parse_cudnn_id("8.9.7.29-cuda12");
    REQUIRE(major);
    CHECK(major->serves(*parse_version("12.4.1")));
    CHECK(major->serves(*parse_version("12.0.0")));
    CHECK_FALSE(major->serves(*parse_version("11.8.0")));
    CHECK_FALSE(parse_cudnn_id("8.9.7.29"));
    CHECK_FALSE(parse_cudnn_id("8.9.7.29-cuda"));
    CHECK_FALSE(parse_cudnn_id("8.9.7.29-cuda12.1.1"));
}

TEST_CASE("specs parse as the contract says") {
    CHECK(parse_spec("12").cuda.str() == "12");
    CHECK_FALSE(parse_spec("12").cudnn);
    Spec s = parse_spec("11.2.2+8.1.0.77");
    CHECK(s.cuda.str() == "11.2.2");
    CHECK(s.cudnn->str() == "8.1.0.77");
    CHECK(s.str() == "11.2.2+8.1.0.77");
    CHECK(parse_spec("system").system);
    Spec full = parse_spec("11.2.2+8.1.0.77-cuda11.2");
    CHECK(full.cudnn_cuda->str() == "11.2");
    CHECK(full.str() == "11.2.2+8.1.0.77-cuda11.2");
}

TEST_CASE("anything that is not a spec is refused with the reason") {
    for (const char* bad : {"", "1.2.3.4", "11.2+8.1.0.77.5", "../11.2", "11.2/..", "11 .2", "11.2;rm",
                            "'11.2'", "\"11.2\"", "11.2$HOME", "11.2\x01", "11.2+", "+8", "latest",
                            "11.2+8-cuda", "11.2\\", "C:\\cuda", "11.2 ", "$(id)", "11.2&x"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_spec(bad), SpecError);
    }
    CHECK_THROWS_WITH(parse_spec("../x"), Catch::Contains("path separator"));
    CHECK_THROWS_WITH(parse_spec("11;2"), Catch::Contains("';'"));
    CHECK_THROWS_WITH(parse_spec("a\tb"), Catch::Contains("control character"));
    CHECK_THROWS_WITH(parse_spec("1.2.3.4"), Catch::Contains("1 to 3 numbers"));
}

TEST_CASE("printable escapes control characters and caps length") {
    CHECK(printable("a\nb") == "a\\x0ab");
    CHECK(printable(std::string(200, 'x')).size() < 100);
}
