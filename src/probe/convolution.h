#pragma once
// The convolutions the probe runs and the CPU reference they are checked against.
// Layout NCHW for data, KCRS for filters; cross-correlation, as cuDNN and the frameworks compute.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cvm::probe {

struct ConvShape {
    int n, c, h, w; // input
    int k, r, s;    // filters: k outputs of c x r x s
    int pad_h, pad_w;
    int stride_h, stride_w;
    int dilation_h, dilation_w;

    int out_h() const;
    int out_w() const;
    std::size_t input_size() const;
    std::size_t filter_size() const;
    std::size_t output_size() const;
    // e.g. "n2 c16 28x28 k32 3x3 pad1 stride2"
    std::string describe() const;
    bool valid() const;
};

// The shapes checked on every probe: padding, stride, dilation, 1x1 and odd sizes.
std::vector<ConvShape> check_shapes();
// The larger, ResNet-like shape that --benchmark times in addition.
ConvShape benchmark_shape();

// Deterministic values in [-1, 1] (a fixed linear congruential sequence per seed).
std::vector<float> test_values(std::size_t count, std::uint32_t seed);

// One output element y[n][k][oh][ow] of the reference, accumulated in double.
double reference_at(const ConvShape& shape, const std::vector<float>& x,
                    const std::vector<float>& w, int n, int k, int oh, int ow);

// The whole reference output.
std::vector<float> reference_convolution(const ConvShape& shape, const std::vector<float>& x,
                                         const std::vector<float>& w);

// The stated tolerance: the largest absolute error may be at most this fraction of the largest
// reference magnitude. FP32 with FMA math (no TF32) stays near 1e-6; TF32 would reach ~1e-3.
constexpr double kRelativeTolerance = 1e-3;

struct Comparison {
    std::size_t checked = 0;    // elements compared
    std::size_t non_finite = 0; // NaN or infinite results
    double max_abs_error = 0;
    double max_abs_reference = 0;
    double relative_error = 0; // max_abs_error / max_abs_reference
    std::size_t worst_index = 0;
    bool matched = false;
};

// Compares `result` with the reference on every element, or on `max_checked` elements spread
// evenly over the output when it is larger (the reference costs C*R*S multiply-adds each).
Comparison compare_with_reference(const ConvShape& shape, const std::vector<float>& x,
                                  const std::vector<float>& w, const std::vector<float>& result,
                                  std::size_t max_checked = 0);

} // namespace cvm::probe
