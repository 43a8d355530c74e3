#include "doctor/framework_check.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace cvm::doctor;

namespace {
std::string report(const std::string& json) {
    return std::string(kFrameworkReportMark) + json + "\n";
}
bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}
} // namespace

TEST_CASE("framework check: the report among what the framework printed", "[doctor][framework]") {
    // The framework's own noise around it; the last report at a line's start counts.
    auto run = parse_framework_report(
        "W1206 warning from XLA\n" + report(R"({"framework": "jax", "installed": false})") + "noise " +
        kFrameworkReportMark + "{}\n" +
        report(R"({"framework": "torch", "installed": true, "version": "2.15.0+cu132", "cuda": "13.2", )"
               R"("cudnn_built": "9.26.0", "cudnn_version": 92600, "nccl_version": "2.30.7", "gpus": 1, )"
               R"("gpu_name": "NVIDIA H100", "convolution": {"ran": true, "max_error": 1.5e-7}, )"
               R"("loaded": ["/v/nvidia/cudnn/lib/libcudnn.so.9", "/v/nvidia/nccl/lib/libnccl.so.2"]})") +
        "trailing stderr\n");
    REQUIRE(run);
    CHECK(run->framework == "torch");
    CHECK(run->installed);
    CHECK(run->cudnn_version == 92600);
    CHECK(run->cudnn_built == "9.26.0");
    CHECK(run->gpus == 1);
    CHECK(run->convolution.ran);
    CHECK(run->convolution.max_error == Approx(1.5e-7));
    REQUIRE(run->loaded);
    CHECK(cudnn_folders(*run->loaded) == std::vector<std::string>{"/v/nvidia/cudnn/lib"});
    // No report, a report that is not JSON, one without its framework, one not at a line's start.
    CHECK_FALSE(parse_framework_report("Traceback (most recent call last):\n"));
    CHECK_FALSE(parse_framework_report(report("{not json")));
    CHECK_FALSE(parse_framework_report(report(R"({"installed": true})")));
    CHECK_FALSE(parse_framework_report(std::string("x ") + kFrameworkReportMark + R"({"framework": "torch"})"));
    // A convolution without a result is an error, not a pass.
    auto silent = parse_framework_report(report(R"({"framework": "torch", "installed": true, "convolution": {}})"));
    REQUIRE(silent);
    CHECK(silent->convolution.error == "it reported no result");
    // Where maps cannot be read the files are unknown, not none.
    auto windows = parse_framework_report(report(R"({"framework": "torch", "installed": true, "loaded": null})"));
    REQUIRE(windows);
    CHECK_FALSE(windows->loaded);
}

TEST_CASE("framework check: what a run means", "[doctor][framework]") {
    FrameworkRun run;
    run.framework = "torch";
    run.installed = true;
    run.cudnn_version = 92600;
    run.loaded = std::vector<std::string>{"/v/cudnn/lib/libcudnn.so.9", "/v/cudnn/lib/libcudnn_graph.so.9"};
    const std::string fix = "select its own cuDNN";
    // No GPU: a pass that says the convolution was not checked.
    auto j = judge_framework_run(run, "PyTorch 2.15.0", fix, 1e-3);
    CHECK(j.problems.empty());
    CHECK(j.warnings.empty());
    REQUIRE(j.not_checked.size() == 1);
    CHECK(has(j.not_checked[0], "convolution on the GPU (it sees no GPU)"));
    CHECK(j.summary == "PyTorch 2.15.0 loads cuDNN 92600 and accepts it");
    // A convolution within the tolerance, one outside it, and NaN (never a pass).
    run.gpus = 1;
    run.convolution.ran = true;
    run.convolution.max_error = 2e-4;
    CHECK(judge_framework_run(run, "PyTorch", fix, 1e-3).problems.empty());
    run.convolution.max_error = 0.5;
    auto wrong = judge_framework_run(run, "PyTorch", fix, 1e-3);
    REQUIRE(wrong.problems.size() == 1);
    CHECK(wrong.problems[0].kind == "wrong_result");
    CHECK(has(wrong.problems[0].message, "max relative error 0.5 > 0.001"));
    run.convolution.max_error = std::nan("");
    CHECK(judge_framework_run(run, "PyTorch", fix, 1e-3).problems.at(0).kind == "wrong_result");
    run.convolution = {};
    run.gpus = 0;
    // The framework's own refusals, each recognised by its words, with the way out.
    struct Case {
        const char* error;
        const char* kind;
    } cases[] = {
        {"RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 26, 0) but found runtime "
         "version (9, 19, 0).",
         "cudnn_refused"},
        {"XlaRuntimeError: Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.8.0.", "cudnn_refused"},
        {"XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed.", "cudnn_refused"},
        {"ImportError: /v/torch/lib/libtorch_cuda.so: undefined symbol: cudnnGetLibConfig, version libcudnn.so.9",
         "foreign_symbols"},
        {"OSError: /usr/lib/libnccl.so.2: version `NCCL_2.30' not found", "foreign_symbols"},
        {"OSError: libcudnn.so.9: cannot open shared object file: No such file or directory", "library_not_found"},
        {"ValueError: something else", "framework_error"},
    };
    for (const auto& c : cases) {
        run.error = c.error;
        run.error_step = "cudnn";
        auto failed = judge_framework_run(run, "PyTorch 2.15.0", fix, 1e-3);
        REQUIRE(failed.problems.size() == 1);
        CHECK(failed.problems[0].kind == c.kind);
        CHECK(has(failed.problems[0].message, c.error));
        CHECK_FALSE(failed.problems[0].fix.empty());
        CHECK(failed.summary.empty());
    }
    // A mixed set: a warning naming every cuDNN file, beside a refusal or alone.
    run.error.clear();
    run.loaded = std::vector<std::string>{"/v/cudnn/lib/libcudnn.so.9", "/usr/lib/libcudnn_graph.so.9",
                                          "/v/nccl/lib/libnccl.so.2"};
    auto mixed = judge_framework_run(run, "PyTorch", fix, 1e-3);
    CHECK(mixed.problems.empty());
    REQUIRE(mixed.warnings.size() == 1);
    CHECK(mixed.warnings[0].kind == "mixed_cudnn");
    CHECK(has(mixed.warnings[0].message, "from 2 folders: /v/cudnn/lib/libcudnn.so.9, /usr/lib/libcudnn_graph.so.9"));
    CHECK_FALSE(has(mixed.warnings[0].message, "libnccl"));
    // cuBLAS and cuBLASLt of two folders: a mixed cuBLAS too, named apart from cuDNN.
    run.loaded = std::vector<std::string>{"/v/cu13/lib/libcublas.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13",
                                          "/v/cudnn/lib/libcudnn.so.9"};
    auto cublas = judge_framework_run(run, "PyTorch", fix, 1e-3);
    REQUIRE(cublas.warnings.size() == 1);
    CHECK(cublas.warnings[0].kind == "mixed_cublas");
    CHECK(has(cublas.warnings[0].message,
              "mixed cuBLAS, its files from 2 folders: /v/cu13/lib/libcublas.so.13, /usr/local/cuda/lib64/libcublasLt.so.13"));
    // Unknown files (Windows): said, not guessed.
    run.loaded.reset();
    CHECK(has(judge_framework_run(run, "PyTorch", fix, 1e-3).not_checked.at(0), "which library files PyTorch loaded"));
}
