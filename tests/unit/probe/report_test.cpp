#include "json_writer.h"
#include "names.h"
#include "report.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace cvm::probe;

TEST_CASE("cuDNN and CUDA version numbers read as releases", "[probe][report]") {
    CHECK(cudnn_version_text(91900) == "9.19.0");
    CHECK(cudnn_version_text(90100) == "9.1.0");
    CHECK(cudnn_version_text(8907) == "8.9.7");
    CHECK(cudnn_version_text(8100) == "8.1.0");
    CHECK(cudnn_version_text(7605) == "7.6.5");
    CHECK(cudnn_version_text(-1).empty());
    CHECK(cudnn_version_major(91900) == 9);
    CHECK(cudnn_version_major(8907) == 8);
    CHECK(cudnn_version_major(7605) == 7);
    CHECK(cuda_version_text(13000) == "13.0");
    CHECK(cuda_version_text(12020) == "12.2");
    CHECK(cuda_version_text(11080) == "11.8");
    CHECK(cuda_version_text(13010) == "13.1");
}

TEST_CASE("library names give their major version", "[probe][report]") {
    CHECK(major_from_library_name("libcudnn.so.9") == 9);
    CHECK(major_from_library_name("/x/y/libcudnn.so.8.9.7") == 8);
    CHECK(major_from_library_name("libcudart.so.11.0") == 11);
    CHECK(major_from_library_name("cudnn64_8.dll") == 8);
    CHECK(major_from_library_name("C:\\cuda\\bin\\cudnn64_9.dll") == 9);
    CHECK(major_from_library_name("libcudnn.so") == -1);
    CHECK(major_from_library_name("cudnn.dll") == -1);
}

TEST_CASE("status and algorithm names cover both cuDNN numbering schemes", "[probe][names]") {
    CHECK(cudnn_status_fallback_name(9) == "CUDNN_STATUS_NOT_SUPPORTED");
    CHECK(cudnn_status_fallback_name(3000) == "CUDNN_STATUS_NOT_SUPPORTED");
    CHECK(cudnn_status_fallback_name(1008) == "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED");
    CHECK(cudnn_status_fallback_name(3999) == "CUDNN_STATUS_NOT_SUPPORTED (category)");
    CHECK(cudnn_status_fallback_name(77) == "CUDNN_STATUS_UNKNOWN");
    CHECK(cuda_error_fallback_name(35) == "cudaErrorInsufficientDriver");
    CHECK(cuda_error_fallback_name(100) == "cudaErrorNoDevice");
    CHECK(forward_algorithm_name(1) == "IMPLICIT_PRECOMP_GEMM");
    CHECK(forward_algorithm_name(7) == "WINOGRAD_NONFUSED");
    CHECK(forward_algorithm_name(12) == "ALGO_12");
    CHECK(math_type_name(3) == "FMA");
}

TEST_CASE("json_quote escapes and repairs text", "[probe][json]") {
    CHECK(json_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
    CHECK(json_quote("x\ny\t\x01") == "\"x\\ny\\t\\u0001\"");
    CHECK(json_quote("caf\xC3\xA9") == "\"caf\xC3\xA9\"");
    CHECK(json_quote("bad\xFF") == "\"bad\xEF\xBF\xBD\"");
    CHECK(json_quote("cut\xC3") == "\"cut\xEF\xBF\xBD\"");
    auto parsed = nlohmann::json::parse(json_quote("\xE2\x82\xAC \xC0\xAF path"));
    CHECK(parsed.get<std::string>().find("\xE2\x82\xAC") == 0);
}

TEST_CASE("JsonWriter writes nested documents", "[probe][json]") {
    JsonWriter json;
    json.begin_object();
    json.key("a").value(1).key("b").begin_array().value(true).null().value(2.5).end_array();
    json.key("empty").begin_object().end_object();
    json.key("nan").value(std::nan(""));
    json.key("list").begin_array().begin_object().key("x").value("y").end_object().end_array();
    json.end_object();
    auto doc = nlohmann::json::parse(json.str());
    CHECK(doc["a"] == 1);
    CHECK(doc["b"][0] == true);
    CHECK(doc["b"][1].is_null());
    CHECK(doc["b"][2] == 2.5);
    CHECK(doc["empty"].empty());
    CHECK(doc["nan"].is_null());
    CHECK(doc["list"][0]["x"] == "y");
}

namespace {
Report sample_report() {
    Report r;
    r.cudnn.name = "libcudnn.so.9";
    r.cudnn.path = "/opt/cudnn/lib/libcudnn.so.9";
    r.cudnn.attempts = {{"libcudnn.so.9", ""}};
    r.cudnn_version = 91900;
    r.cudnn_cudart_version = 13000;
    r.cudart.name = "libcudart.so.13";
    r.cudart.path = "/usr/local/cuda/lib64/libcudart.so.13";
    r.runtime_version = 13000;
    r.driver_version = 13000;
    r.device_count = 1;
    r.device_name = "NVIDIA H200";
    r.cc_major = 9;
    r.cc_minor = 0;
    r.math = "FMA";
    r.cuda_modules = {{"/opt/cudnn/lib/libcudnn.so.9", "/opt/cudnn/lib/libcudnn.so.9"}};
    r.cudnn_folders = {"/opt/cudnn/lib"};
    ConvolutionRun run;
    run.shape = check_shapes()[0];
    run.ran = true;
    run.algorithm = "IMPLICIT_GEMM";
    run.comparison.matched = true;
    run.comparison.checked = run.shape.output_size();
    r.convolutions.push_back(run);
    BenchmarkRun bench;
    bench.shape = benchmark_shape();
    AlgorithmTiming t;
    t.algorithm = "WINOGRAD";
    t.status = "CUDNN_STATUS_SUCCESS";
    t.time_ms = 0.25;
    t.verified = true;
    t.comparison.matched = true;
    bench.algorithms.push_back(t);
    r.benchmarks.push_back(bench);
    return r;
}
} // namespace

TEST_CASE("a report that ran and matched is ok; any problem makes it fail", "[probe][report]") {
    Report r = sample_report();
    CHECK(r.ok());
    r.convolutions[0].comparison.matched = false;
    CHECK_FALSE(r.ok());
    r = sample_report();
    r.convolutions[0].ran = false;
    CHECK_FALSE(r.ok());
    r = sample_report();
    r.add_problem(problem::kMixedCudnnFolders, "two folders");
    CHECK_FALSE(r.ok());
    CHECK_FALSE(Report{}.ok()); // nothing ran
}

TEST_CASE("the JSON report carries versions, device, libraries and results", "[probe][report]") {
    Report r = sample_report();
    r.add_problem(problem::kNoDriver, "no \"driver\"");
    auto doc = nlohmann::json::parse(render_json(r));
    CHECK(doc["ok"] == false);
    CHECK(doc["cudnn"]["path"] == "/opt/cudnn/lib/libcudnn.so.9");
    CHECK(doc["cudnn_version"]["number"] == 91900);
    CHECK(doc["cudnn_version"]["text"] == "9.19.0");
    CHECK(doc["cudnn_version"]["cudart_text"] == "13.0");
    CHECK(doc["driver_version"]["text"] == "13.0");
    CHECK(doc["device"]["name"] == "NVIDIA H200");
    CHECK(doc["device"]["compute_capability"] == "9.0");
    CHECK(doc["libraries"][0]["real_path"] == "/opt/cudnn/lib/libcudnn.so.9");
    CHECK(doc["convolutions"][0]["matched"] == true);
    CHECK(doc["convolutions"][0]["shape"] == "n1 c3 32x32 k8 3x3 pad1 stride1");
    CHECK(doc["benchmark"][0]["algorithms"][0]["algorithm"] == "WINOGRAD");
    CHECK(doc["problems"][0]["kind"] == "no_driver");
    CHECK(doc["problems"][0]["message"] == "no \"driver\"");
    CHECK(doc["tolerance"]["relative"] == 1e-3);

    Report empty;
    auto blank = nlohmann::json::parse(render_json(empty));
    CHECK(blank["cudnn"]["loaded"] == false);
    CHECK(blank["cudnn_version"]["number"].is_null());
    CHECK(blank["device"]["name"].is_null());
}

TEST_CASE("the text report names the result", "[probe][report]") {
    Report r = sample_report();
    std::string text = render_text(r);
    CHECK(text.find("9.19.0 (91900)") != std::string::npos);
    CHECK(text.find("NVIDIA H200, compute capability 9.0") != std::string::npos);
    CHECK(text.find("result: OK") != std::string::npos);
    r.add_problem(problem::kWrongResult, "bad numbers");
    text = render_text(r);
    CHECK(text.find("problem [wrong_result]: bad numbers") != std::string::npos);
    CHECK(text.find("result: FAILED") != std::string::npos);
}
