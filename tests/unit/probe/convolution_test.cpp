#include "convolution.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using cvm::probe::ConvShape;

namespace {
ConvShape shape(int n, int c, int h, int w, int k, int r, int s, int pad, int stride,
                int dilation = 1) {
    return {n, c, h, w, k, r, s, pad, pad, stride, stride, dilation, dilation};
}
} // namespace

TEST_CASE("output sizes follow the convolution arithmetic", "[probe][conv]") {
    CHECK(shape(1, 1, 32, 32, 1, 3, 3, 1, 1).out_h() == 32);
    CHECK(shape(1, 1, 28, 28, 1, 3, 3, 1, 2).out_h() == 14);
    CHECK(shape(1, 1, 33, 33, 1, 5, 5, 2, 2).out_w() == 17);
    CHECK(shape(1, 1, 17, 17, 1, 3, 3, 2, 1, 2).out_h() == 17);
    CHECK(shape(1, 1, 7, 7, 1, 7, 7, 0, 1).out_h() == 1);
    CHECK(shape(2, 3, 4, 5, 6, 1, 1, 0, 1).output_size() == 2u * 6 * 4 * 5);
    CHECK_FALSE(shape(1, 1, 2, 2, 1, 5, 5, 0, 1).valid());
    CHECK(shape(1, 1, 2, 2, 1, 5, 5, 2, 1).valid());
}

TEST_CASE("the reference computes cross-correlation with padding and stride", "[probe][conv]") {
    // Input 1x1x3x3 = 1..9, filter 1x1x2x2 = [[1, 2], [3, 4]], no padding, stride 1.
    ConvShape s = shape(1, 1, 3, 3, 1, 2, 2, 0, 1);
    std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    std::vector<float> w = {1, 2, 3, 4};
    auto y = cvm::probe::reference_convolution(s, x, w);
    REQUIRE(y.size() == 4);
    // Not flipped: y[0][0] = 1*1 + 2*2 + 4*3 + 5*4.
    CHECK(y[0] == 37);
    CHECK(y[1] == 47);
    CHECK(y[2] == 67);
    CHECK(y[3] == 77);

    // Padding 1, stride 2: outputs at (-1,-1), (-1,1), (1,-1), (1,1).
    ConvShape padded = shape(1, 1, 3, 3, 1, 2, 2, 1, 2);
    REQUIRE(padded.out_h() == 2);
    auto yp = cvm::probe::reference_convolution(padded, x, w);
    CHECK(yp[0] == 4 * 1);         // only x[0][0] under w[1][1]
    CHECK(yp[1] == 3 * 2 + 4 * 3); // x[0][1], x[0][2] under w[1][0], w[1][1]
    CHECK(yp[3] == 1 * 5 + 2 * 6 + 3 * 8 + 4 * 9);
}

TEST_CASE("the reference sums over channels and separates filters", "[probe][conv]") {
    ConvShape s = shape(1, 2, 1, 1, 2, 1, 1, 0, 1);
    std::vector<float> x = {3, 5};
    std::vector<float> w = {1, 10, 2, 20}; // filter 0: (1, 10), filter 1: (2, 20)
    auto y = cvm::probe::reference_convolution(s, x, w);
    CHECK(y[0] == 53);
    CHECK(y[1] == 106);
}

TEST_CASE("dilation spreads the filter taps", "[probe][conv]") {
    ConvShape s = shape(1, 1, 1, 5, 1, 1, 3, 0, 1, 2); // 1x5 row, 1x3 filter, dilation 2
    std::vector<float> x = {1, 2, 3, 4, 5};
    std::vector<float> w = {1, 1, 1};
    auto y = cvm::probe::reference_convolution(s, x, w);
    REQUIRE(y.size() == 1);
    CHECK(y[0] == 1 + 3 + 5);
}

TEST_CASE("comparison passes the reference and flags wrong numbers", "[probe][conv]") {
    for (const auto& s : cvm::probe::check_shapes()) {
        REQUIRE(s.valid());
        auto x = cvm::probe::test_values(s.input_size(), 1);
        auto w = cvm::probe::test_values(s.filter_size(), 2);
        auto y = cvm::probe::reference_convolution(s, x, w);
        auto good = cvm::probe::compare_with_reference(s, x, w, y);
        CHECK(good.matched);
        CHECK(good.checked == s.output_size());
        CHECK(good.relative_error < 1e-6);

        auto wrong = y;
        wrong[wrong.size() / 2] += 0.5f;
        auto bad = cvm::probe::compare_with_reference(s, x, w, wrong);
        CHECK_FALSE(bad.matched);
        CHECK(bad.worst_index == wrong.size() / 2);

        auto nan = y;
        nan.back() = std::numeric_limits<float>::quiet_NaN();
        auto with_nan = cvm::probe::compare_with_reference(s, x, w, nan);
        CHECK_FALSE(with_nan.matched);
        CHECK(with_nan.non_finite == 1);
    }
}

TEST_CASE("a TF32-sized error fails, an FP32-sized one passes", "[probe][conv]") {
    auto s = cvm::probe::check_shapes()[1];
    auto x = cvm::probe::test_values(s.input_size(), 3);
    auto w = cvm::probe::test_values(s.filter_size(), 4);
    auto y = cvm::probe::reference_convolution(s, x, w);
    auto cmp = cvm::probe::compare_with_reference(s, x, w, y);
    float magnitude = static_cast<float>(cmp.max_abs_reference);
    auto fp32 = y;
    for (auto& v : fp32)
        v += magnitude * 1e-5f;
    CHECK(cvm::probe::compare_with_reference(s, x, w, fp32).matched);
    auto tf32 = y;
    tf32[7] += magnitude * 5e-3f;
    CHECK_FALSE(cvm::probe::compare_with_reference(s, x, w, tf32).matched);
}

TEST_CASE("sampled comparison checks a spread of outputs", "[probe][conv]") {
    ConvShape s = cvm::probe::check_shapes()[2];
    auto x = cvm::probe::test_values(s.input_size(), 5);
    auto w = cvm::probe::test_values(s.filter_size(), 6);
    auto y = cvm::probe::reference_convolution(s, x, w);
    auto sampled = cvm::probe::compare_with_reference(s, x, w, y, 100);
    CHECK(sampled.checked == 100);
    CHECK(sampled.matched);
    // A wrong output at a sampled index (the first) is found.
    y[0] += 100.0f;
    CHECK_FALSE(cvm::probe::compare_with_reference(s, x, w, y, 100).matched);
    // A result of the wrong size never matches.
    y.pop_back();
    CHECK_FALSE(cvm::probe::compare_with_reference(s, x, w, y).matched);
}

TEST_CASE("test values are deterministic and within [-1, 1]", "[probe][conv]") {
    auto a = cvm::probe::test_values(1000, 9);
    auto b = cvm::probe::test_values(1000, 9);
    auto c = cvm::probe::test_values(1000, 10);
    CHECK(a == b);
    CHECK(a != c);
    double sum = 0;
    for (float v : a) {
        CHECK(v >= -1.0f);
        CHECK(v <= 1.0f);
        sum += v;
    }
    CHECK(std::fabs(sum / 1000) < 0.1);
}

TEST_CASE("the benchmark shape is a real layer", "[probe][conv]") {
    auto s = cvm::probe::benchmark_shape();
    CHECK(s.valid());
    CHECK(s.out_h() == 56);
    CHECK(s.describe() == "n8 c64 56x56 k64 3x3 pad1 stride1");
    CHECK(cvm::probe::check_shapes().size() >= 3);
    CHECK(cvm::probe::check_shapes()[4].describe() == "n2 c4 17x17 k8 3x3 pad2 stride1 dilation2");
}
