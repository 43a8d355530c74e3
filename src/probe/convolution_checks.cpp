// The convolutions the probe runs on the GPU and checks against the CPU: fixed algorithms by
// default, cuDNN's heuristics and every algorithm timed with --benchmark.
#include "prober.h"

#include "convolution.h"
#include "names.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

namespace cvm::probe::detail {

// Device memory that frees itself.
class DeviceBuffer {
public:
    DeviceBuffer(const CudartApi& cudart) : cudart_(cudart) {}
    ~DeviceBuffer() {
        if (pointer_) cudart_.Free(pointer_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    int allocate(std::size_t bytes) {
        if (pointer_) cudart_.Free(pointer_);
        pointer_ = nullptr;
        if (bytes == 0) return api::kCudaSuccess;
        return cudart_.Malloc(&pointer_, bytes);
    }
    void* get() const { return pointer_; }

private:
    const CudartApi& cudart_;
    void* pointer_ = nullptr;
};

// Descriptors and device buffers for one shape.
class ShapeSetup {
public:
    ShapeSetup(Prober& prober, const ConvShape& shape, std::uint32_t seed)
        : p_(prober), shape_(shape), x_dev_(prober.cudart_), w_dev_(prober.cudart_),
          y_dev_(prober.cudart_), workspace_(prober.cudart_) {
        x_ = test_values(shape.input_size(), seed);
        w_ = test_values(shape.filter_size(), seed + 7919);
    }
    ~ShapeSetup() {
        const CudnnApi& c = p_.cudnn_;
        if (x_desc_) c.DestroyTensorDescriptor(x_desc_);
        if (y_desc_) c.DestroyTensorDescriptor(y_desc_);
        if (w_desc_) c.DestroyFilterDescriptor(w_desc_);
        if (conv_desc_) c.DestroyConvolutionDescriptor(conv_desc_);
    }
    ShapeSetup(const ShapeSetup&) = delete;
    ShapeSetup& operator=(const ShapeSetup&) = delete;

    // Returns an error text naming the failed call, or empty. `kind` receives the problem kind.
    std::string prepare(std::string& kind);
    // Runs one algorithm with `math` and compares. Returns an error text, or empty.
    std::string run(int algorithm, int math, std::size_t max_checked, ConvolutionRun& out,
                    std::string& kind);
    std::vector<api::cudnnConvolutionFwdAlgoPerf> heuristic(std::string& error);
    std::vector<api::cudnnConvolutionFwdAlgoPerf> find(std::string& error);

private:
    std::string cudnn_failed(const char* call, int status) const {
        return std::string(call) + " returned " + p_.cudnn_status(status);
    }
    std::string cuda_failed(const char* call, int error) const {
        return std::string(call) + " returned " + p_.cuda_error(error);
    }
    int algorithm_slots() const;

    Prober& p_;
    ConvShape shape_;
    std::vector<float> x_, w_;
    api::cudnnTensorDescriptor x_desc_ = nullptr, y_desc_ = nullptr;
    api::cudnnFilterDescriptor w_desc_ = nullptr;
    api::cudnnConvolutionDescriptor conv_desc_ = nullptr;
    DeviceBuffer x_dev_, w_dev_, y_dev_, workspace_;
};

std::string ShapeSetup::prepare(std::string& kind) {
    const CudnnApi& c = p_.cudnn_;
    const CudartApi& rt = p_.cudart_;
    const ConvShape& s = shape_;
    kind = problem::kCudnnError;
    int st = c.CreateTensorDescriptor(&x_desc_);
    if (st) return x_desc_ = nullptr, cudnn_failed("cudnnCreateTensorDescriptor", st);
    st = c.SetTensor4dDescriptor(x_desc_, api::kCudnnTensorNchw, api::kCudnnDataFloat, s.n, s.c,
                                 s.h, s.w);
    if (st) return cudnn_failed("cudnnSetTensor4dDescriptor", st);
    st = c.CreateFilterDescriptor(&w_desc_);
    if (st) return w_desc_ = nullptr, cudnn_failed("cudnnCreateFilterDescriptor", st);
    st = c.SetFilter4dDescriptor(w_desc_, api::kCudnnDataFloat, api::kCudnnTensorNchw, s.k, s.c,
                                 s.r, s.s);
    if (st) return cudnn_failed("cudnnSetFilter4dDescriptor", st);
    st = c.CreateConvolutionDescriptor(&conv_desc_);
    if (st) return conv_desc_ = nullptr, cudnn_failed("cudnnCreateConvolutionDescriptor", st);
    st = c.SetConvolution2dDescriptor(conv_desc_, s.pad_h, s.pad_w, s.stride_h, s.stride_w,
                                      s.dilation_h, s.dilation_w, api::kCudnnCrossCorrelation,
                                      api::kCudnnDataFloat);
    if (st) return cudnn_failed("cudnnSetConvolution2dDescriptor", st);
    if (p_.set_math_) {
        st = c.SetConvolutionMathType(conv_desc_, p_.math_);
        if (st) return cudnn_failed("cudnnSetConvolutionMathType", st);
    }
    int n = 0, k = 0, h = 0, w = 0;
    st = c.GetConvolution2dForwardOutputDim(conv_desc_, x_desc_, w_desc_, &n, &k, &h, &w);
    if (st) return cudnn_failed("cudnnGetConvolution2dForwardOutputDim", st);
    if (n != s.n || k != s.k || h != s.out_h() || w != s.out_w()) {
        kind = problem::kWrongResult;
        return "cudnnGetConvolution2dForwardOutputDim gives " + std::to_string(n) + "x" +
               std::to_string(k) + "x" + std::to_string(h) + "x" + std::to_string(w) +
               ", the reference " + std::to_string(s.n) + "x" + std::to_string(s.k) + "x" +
               std::to_string(s.out_h()) + "x" + std::to_string(s.out_w());
    }
    st = c.CreateTensorDescriptor(&y_desc_);
    if (st) return y_desc_ = nullptr, cudnn_failed("cudnnCreateTensorDescriptor", st);
    st = c.SetTensor4dDescriptor(y_desc_, api::kCudnnTensorNchw, api::kCudnnDataFloat, n, k, h, w);
    if (st) return cudnn_failed("cudnnSetTensor4dDescriptor", st);

    kind = problem::kCudaError;
    int e = x_dev_.allocate(x_.size() * sizeof(float));
    if (e == 0) e = w_dev_.allocate(w_.size() * sizeof(float));
    if (e == 0) e = y_dev_.allocate(s.output_size() * sizeof(float));
    if (e) return cuda_failed("cudaMalloc", e);
    e = rt.Memcpy(x_dev_.get(), x_.data(), x_.size() * sizeof(float), api::kCudaMemcpyHostToDevice);
    if (e == 0)
        e = rt.Memcpy(w_dev_.get(), w_.data(), w_.size() * sizeof(float),
                      api::kCudaMemcpyHostToDevice);
    if (e) return cuda_failed("cudaMemcpy (host to device)", e);
    kind.clear();
    return {};
}

int ShapeSetup::algorithm_slots() const {
    int count = api::kCudnnFwdAlgoCount;
    if (p_.cudnn_.GetConvolutionForwardAlgorithmMaxCount) {
        int reported = 0;
        if (p_.cudnn_.GetConvolutionForwardAlgorithmMaxCount(p_.handle_, &reported) == 0 &&
            reported > 0)
            count = std::min(reported, 64);
    }
    return count;
}

std::vector<api::cudnnConvolutionFwdAlgoPerf> ShapeSetup::heuristic(std::string& error) {
    std::vector<api::cudnnConvolutionFwdAlgoPerf> results(
        static_cast<std::size_t>(algorithm_slots()));
    int returned = 0;
    int st = p_.cudnn_.GetConvolutionForwardAlgorithm_v7(p_.handle_, x_desc_, w_desc_, conv_desc_,
                                                         y_desc_, static_cast<int>(results.size()),
                                                         &returned, results.data());
    if (st) {
        error = cudnn_failed("cudnnGetConvolutionForwardAlgorithm_v7", st);
        return {};
    }
    results.resize(
        static_cast<std::size_t>(std::clamp(returned, 0, static_cast<int>(results.size()))));
    return results;
}

std::vector<api::cudnnConvolutionFwdAlgoPerf> ShapeSetup::find(std::string& error) {
    std::vector<api::cudnnConvolutionFwdAlgoPerf> results(
        static_cast<std::size_t>(algorithm_slots()));
    int returned = 0;
    int st = p_.cudnn_.FindConvolutionForwardAlgorithm(p_.handle_, x_desc_, w_desc_, conv_desc_,
                                                       y_desc_, static_cast<int>(results.size()),
                                                       &returned, results.data());
    if (st) {
        error = cudnn_failed("cudnnFindConvolutionForwardAlgorithm", st);
        return {};
    }
    results.resize(
        static_cast<std::size_t>(std::clamp(returned, 0, static_cast<int>(results.size()))));
    // cuDNN documents them sorted by time; sort anyway, failures last.
    std::stable_sort(results.begin(), results.end(), [](const auto& a, const auto& b) {
        if ((a.status == 0) != (b.status == 0)) return a.status == 0;
        return a.status == 0 && a.time < b.time;
    });
    return results;
}

std::string ShapeSetup::run(int algorithm, int math, std::size_t max_checked, ConvolutionRun& out,
                            std::string& kind) {
    const CudnnApi& c = p_.cudnn_;
    const CudartApi& rt = p_.cudart_;
    out.algorithm = forward_algorithm_name(algorithm);
    out.math = math_type_name(math);
    kind = problem::kCudnnError;
    if (p_.set_math_) {
        int st = c.SetConvolutionMathType(conv_desc_, math);
        if (st) return cudnn_failed("cudnnSetConvolutionMathType", st);
    }
    std::size_t workspace = 0;
    int st = c.GetConvolutionForwardWorkspaceSize(p_.handle_, x_desc_, w_desc_, conv_desc_, y_desc_,
                                                  algorithm, &workspace);
    if (st) return cudnn_failed("cudnnGetConvolutionForwardWorkspaceSize", st);
    out.workspace_bytes = workspace;
    kind = problem::kCudaError;
    int e = workspace_.allocate(workspace);
    if (e) return cuda_failed("cudaMalloc (workspace)", e);
    // NaN everywhere first: an algorithm that leaves outputs unwritten cannot pass.
    std::vector<float> y(shape_.output_size(), std::numeric_limits<float>::quiet_NaN());
    e = rt.Memcpy(y_dev_.get(), y.data(), y.size() * sizeof(float), api::kCudaMemcpyHostToDevice);
    if (e) return cuda_failed("cudaMemcpy (host to device)", e);
    const float alpha = 1.0f, beta = 0.0f;
    auto start = Clock::now();
    kind = problem::kCudnnError;
    st = c.ConvolutionForward(p_.handle_, &alpha, x_desc_, x_dev_.get(), w_desc_, w_dev_.get(),
                              conv_desc_, algorithm, workspace_.get(), workspace, &beta, y_desc_,
                              y_dev_.get());
    if (st) return cudnn_failed("cudnnConvolutionForward", st);
    kind = problem::kCudaError;
    e = rt.DeviceSynchronize();
    out.time_ms = ms_since(start);
    if (e) return cuda_failed("cudaDeviceSynchronize after cudnnConvolutionForward", e);
    e = rt.Memcpy(y.data(), y_dev_.get(), y.size() * sizeof(float), api::kCudaMemcpyDeviceToHost);
    if (e) return cuda_failed("cudaMemcpy (device to host)", e);
    out.ran = true;
    out.comparison = compare_with_reference(shape_, x_, w_, y, max_checked);
    kind.clear();
    return {};
}

std::string describe_mismatch(const ConvShape& shape, const std::string& algorithm,
                              const Comparison& cmp) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer,
                  "max error %.3g against max |reference| %.3g (relative %.3g > %g)",
                  cmp.max_abs_error, cmp.max_abs_reference, cmp.relative_error, kRelativeTolerance);
    std::string text = "convolution " + shape.describe() + " with " + algorithm +
                       " does not match the CPU reference: ";
    if (cmp.non_finite)
        text += std::to_string(cmp.non_finite) + " of " + std::to_string(cmp.checked) +
                " outputs are NaN or infinite";
    else
        text += buffer;
    return text;
}

// The algorithms the checks run without --benchmark, in order: the implicit GEMM, which supports
// every convolution, then the implicit precomputed GEMM should cuDNN refuse it. Asking the
// heuristics costs about 260 ms a process on an H200 (cuDNN 9 builds its engine lists then), more
// than the convolutions themselves. The precomputed GEMM first cost 80 ms more on the first
// shape and loaded cuBLASLt for the 1x1 shape (150 ms); the implicit GEMM first: 80 ms and 9 ms
// (H200, cuDNN 9.19, medians of 9).
std::vector<api::cudnnConvolutionFwdAlgoPerf> fixed_algorithms() {
    std::vector<api::cudnnConvolutionFwdAlgoPerf> out;
    for (int algo : {api::kCudnnFwdAlgoImplicitGemm, api::kCudnnFwdAlgoImplicitPrecompGemm}) {
        api::cudnnConvolutionFwdAlgoPerf perf{};
        perf.algo = algo;
        out.push_back(perf);
    }
    return out;
}

void Prober::run_checks() {
    auto start = Clock::now();
    report_.algorithm_choice = options_.benchmark ? "heuristic" : "fixed";
    auto shapes = check_shapes();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        auto shape_start = Clock::now();
        ConvolutionRun run;
        run.shape = shapes[i];
        ShapeSetup setup(*this, shapes[i], static_cast<std::uint32_t>(i + 1));
        std::string kind;
        std::string error = setup.prepare(kind);
        if (error.empty()) {
            auto candidates = options_.benchmark ? setup.heuristic(error) : fixed_algorithms();
            if (error.empty() && candidates.empty())
                error = "cudnnGetConvolutionForwardAlgorithm_v7 offered no algorithm";
            // The heuristic's first usable choice is what a framework without benchmarking runs;
            // if cuDNN refuses it, the next ones tell whether any forward algorithm works. The
            // fixed list falls back the same way from the implicit precomputed GEMM.
            std::string first_error;
            for (const auto& candidate : candidates) {
                if (candidate.status != 0) continue;
                ConvolutionRun attempt = run;
                int math = set_math_ ? math_ : api::kCudnnDefaultMath;
                error = setup.run(candidate.algo, math, 0, attempt, kind);
                if (error.empty()) {
                    run = attempt;
                    break;
                }
                if (first_error.empty()) first_error = error;
                run.algorithm = attempt.algorithm;
            }
            if (!run.ran && error.empty()) error = "no algorithm succeeded";
            if (!run.ran && !first_error.empty()) error = first_error;
        }
        if (!run.ran) {
            run.error = error;
            if (kind.empty()) kind = problem::kCudnnError;
            report_.add_problem(kind, "convolution " + run.shape.describe() + ": " + error);
        } else if (!run.comparison.matched) {
            report_.add_problem(problem::kWrongResult,
                                describe_mismatch(run.shape, run.algorithm, run.comparison));
        }
        run.wall_ms = ms_since(shape_start);
        report_.convolutions.push_back(run);
    }
    report_.timings.convolution_ms = ms_since(start);
}

void Prober::run_benchmarks() {
    auto start = Clock::now();
    auto shapes = check_shapes();
    shapes.push_back(benchmark_shape());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
        BenchmarkRun bench;
        bench.shape = shapes[i];
        ShapeSetup setup(*this, shapes[i], static_cast<std::uint32_t>(100 + i));
        std::string kind;
        std::string error = setup.prepare(kind);
        std::vector<api::cudnnConvolutionFwdAlgoPerf> results;
        if (error.empty()) results = setup.find(error);
        bench.error = error;
        if (!error.empty())
            report_.add_problem(kind.empty() ? problem::kCudnnError : kind,
                                "benchmark " + bench.shape.describe() + ": " + error);
        // On the large shape only the fastest algorithm, the one cudnn.benchmark would pick, is
        // checked, on an even sample of outputs: the reference is plain CPU code.
        const bool large = bench.shape.output_size() > 65536;
        const std::size_t max_checked = large ? 8192 : 0;
        bool checked_one = false;
        for (const auto& r : results) {
            AlgorithmTiming timing;
            timing.algorithm = forward_algorithm_name(r.algo);
            timing.algorithm_id = r.algo;
            timing.status = r.status == 0 ? "CUDNN_STATUS_SUCCESS" : cudnn_status(r.status);
            timing.time_ms = r.time;
            timing.workspace_bytes = r.memory;
            timing.math = math_type_name(r.mathType);
            timing.deterministic = r.determinism == 1;
            if (r.status == 0 && !(large && checked_one)) {
                checked_one = true;
                ConvolutionRun check;
                check.shape = bench.shape;
                std::string run_kind;
                std::string run_error =
                    setup.run(r.algo, set_math_ ? r.mathType : api::kCudnnDefaultMath, max_checked,
                              check, run_kind);
                timing.verified = check.ran;
                timing.comparison = check.comparison;
                timing.error = run_error;
                if (!run_error.empty())
                    report_.add_problem(run_kind.empty() ? problem::kCudnnError : run_kind,
                                        "benchmark " + bench.shape.describe() + " " +
                                            timing.algorithm + ": " + run_error);
                else if (!check.comparison.matched)
                    report_.add_problem(
                        problem::kWrongResult,
                        describe_mismatch(bench.shape, timing.algorithm, check.comparison));
            }
            bench.algorithms.push_back(timing);
        }
        report_.benchmarks.push_back(bench);
    }
    report_.timings.benchmark_ms = ms_since(start);
}

} // namespace cvm::probe::detail
