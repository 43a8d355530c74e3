#include <catch2/catch.hpp>

#include "spec/spec.h"

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

TEST_CASE("a toolkit's name (import --as) stands for the CUDA part") {
    Spec s = parse_spec("deb-11.8+8.9+nccl2.21");
    CHECK(s.name == "deb-11.8");
    CHECK(s.cuda.empty());
    CHECK(s.cudnn->str() == "8.9");
    CHECK(s.nccl->str() == "2.21");
    CHECK(s.str() == "deb-11.8+8.9+nccl2.21");
    CHECK(parse_spec("Mine_2").str() == "Mine_2");
    CHECK(parse_spec("mine+8.9.7.29-cuda11").cudnn_cuda->str() == "11");
    CHECK(parse_spec("12.4").name.empty());
    // Words cvm reads itself, Windows' device names, and what a folder cannot be named are not names.
    for (const char* bad : {"latest", "LATEST", "cuda", "cudnn", "nccl", "nccl2", "ncclx", "con", "Nul.x",
                            "com1", "lpt9", "mine.", "mine-", "a..b", "x@y", "_x", "-x"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_spec(bad), SpecError);
        CHECK_FALSE(is_toolkit_name(bad));
    }
    CHECK_THROWS_AS(parse_spec("mine+x"), SpecError);
    CHECK_THROWS_WITH(parse_spec("latest"), Catch::Contains("a word cvm reads itself"));
    CHECK_THROWS_WITH(parse_spec("con"), Catch::Contains("device's name on Windows"));
    CHECK(is_toolkit_name(std::string(64, 'a')));
    CHECK_FALSE(is_toolkit_name(std::string(65, 'a')));
    CHECK(is_toolkit_name("console"));
    CHECK(is_toolkit_name("com10"));
}

TEST_CASE("printable escapes control characters and caps length") {
    CHECK(printable("a\nb") == "a\\x0ab");
    CHECK(printable(std::string(200, 'x')).size() < 100);
}

TEST_CASE("NCCL in specs: CUDA[+CUDNN][+ncclVERSION]") {
    Spec a = parse_spec("12.4+9.1+nccl2.21");
    CHECK(a.cuda.str() == "12.4");
    CHECK(a.cudnn->str() == "9.1");
    CHECK(a.nccl->str() == "2.21");
    CHECK_FALSE(a.nccl_cuda);
    CHECK(a.str() == "12.4+9.1+nccl2.21");
    Spec b = parse_spec("13.0+nccl2.28");
    CHECK_FALSE(b.cudnn);
    CHECK(b.nccl->str() == "2.28");
    CHECK(b.str() == "13.0+nccl2.28");
    // The full form of CVM_ACTIVE.
    Spec full = parse_spec("12.4.1+9.1.0.70-cuda12+nccl2.21.5-cuda12.4");
    CHECK(full.cudnn_cuda->str() == "12");
    CHECK(full.nccl->str() == "2.21.5");
    CHECK(full.nccl_cuda->str() == "12.4");
    CHECK(full.str() == "12.4.1+9.1.0.70-cuda12+nccl2.21.5-cuda12.4");
    CHECK(parse_spec("12+nccl2").nccl->str() == "2");
    for (const char* bad :
         {"12+nccl", "12+nccl2.21.5.1", "12+ncclx", "12+nccl2+nccl2", "12+nccl2.21+9.1", "12+9+9",
          "12+nccl2-cuda", "12+nccl2-cuda1.2.3", "12+NCCL2"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_spec(bad), SpecError);
    }
    CHECK_THROWS_WITH(parse_spec("12+nccl2.21+9.1"), Catch::Contains("before the NCCL part"));
    CHECK_THROWS_WITH(parse_spec("12+nccl"), Catch::Contains("nccl2.21"));
}

TEST_CASE("NCCL ids say the CUDA a build is for; a build serves its CUDA major") {
    auto id = parse_nccl_id("2.21.5-cuda12.4");
    REQUIRE(id);
    CHECK(id->str() == "2.21.5-cuda12.4");
    CHECK(id->serves(*parse_version("12.2.0")));
    CHECK(id->serves(*parse_version("12.8.1")));
    CHECK_FALSE(id->serves(*parse_version("13.0.0")));
    CHECK(parse_nccl_id("2.28.9-cuda13")->cuda.str() == "13");
    CHECK_FALSE(parse_nccl_id("2.21-cuda12.4"));
    CHECK_FALSE(parse_nccl_id("2.21.5"));
    CHECK_FALSE(parse_nccl_id("2.21.5-cuda"));
}
