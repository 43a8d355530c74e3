#include "convolution.h"

#include <algorithm>
#include <cmath>

namespace cvm::probe {

int ConvShape::out_h() const {
    return (h + 2 * pad_h - dilation_h * (r - 1) - 1) / stride_h + 1;
}
int ConvShape::out_w() const {
    return (w + 2 * pad_w - dilation_w * (s - 1) - 1) / stride_w + 1;
}
std::size_t ConvShape::input_size() const {
    return static_cast<std::size_t>(n) * c * h * w;
}
std::size_t ConvShape::filter_size() const {
    return static_cast<std::size_t>(k) * c * r * s;
}
std::size_t ConvShape::output_size() const {
    return static_cast<std::size_t>(n) * k * out_h() * out_w();
}

bool ConvShape::valid() const {
    return n > 0 && c > 0 && h > 0 && w > 0 && k > 0 && r > 0 && s > 0 && pad_h >= 0 &&
           pad_w >= 0 && stride_h > 0 && stride_w > 0 && dilation_h > 0 && dilation_w > 0 &&
           h + 2 * pad_h >= dilation_h * (r - 1) + 1 && w + 2 * pad_w >= dilation_w * (s - 1) + 1;
}

std::string ConvShape::describe() const {
    auto pair = [](int a, int b) {
        return a == b ? std::to_string(a) : std::to_string(a) + "x" + std::to_string(b);
    };
    std::string text = "n" + std::to_string(n) + " c" + std::to_string(c) + " " +
                       std::to_string(h) + "x" + std::to_string(w) + " k" + std::to_string(k) +
                       " " + std::to_string(r) + "x" + std::to_string(s) + " pad" +
                       pair(pad_h, pad_w) + " stride" + pair(stride_h, stride_w);
    if (dilation_h != 1 || dilation_w != 1) text += " dilation" + pair(dilation_h, dilation_w);
    return text;
}

std::vector<ConvShape> check_shapes() {
    return {
        // n  c   h   w   k   r  s  pad   stride  dilation
        {1, 3, 32, 32, 8, 3, 3, 1, 1, 1, 1, 1, 1},   // a first layer: 3 channels, same size
        {2, 16, 28, 28, 32, 3, 3, 1, 1, 2, 2, 1, 1}, // stride 2
        {4, 32, 14, 14, 64, 1, 1, 0, 0, 1, 1, 1, 1}, // 1x1, no padding
        {1, 8, 33, 31, 16, 5, 5, 2, 2, 2, 2, 1, 1},  // odd sizes, 5x5, stride 2
        {2, 4, 17, 17, 8, 3, 3, 2, 2, 1, 1, 2, 2},   // dilation 2
    };
}

ConvShape benchmark_shape() {
    return {8, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1}; // a ResNet-50 stage-1 layer, batch 8
}

std::vector<float> test_values(std::size_t count, std::uint32_t seed) {
    std::vector<float> values(count);
    std::uint32_t state = seed * 2654435761u + 12345u;
    for (auto& v : values) {
        state = state * 1664525u + 1013904223u;
        v = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
    }
    return values;
}

double reference_at(const ConvShape& sh, const std::vector<float>& x, const std::vector<float>& w,
                    int n, int k, int oh, int ow) {
    double sum = 0;
    for (int c = 0; c < sh.c; ++c) {
        for (int r = 0; r < sh.r; ++r) {
            int ih = oh * sh.stride_h - sh.pad_h + r * sh.dilation_h;
            if (ih < 0 || ih >= sh.h) continue;
            for (int s = 0; s < sh.s; ++s) {
                int iw = ow * sh.stride_w - sh.pad_w + s * sh.dilation_w;
                if (iw < 0 || iw >= sh.w) continue;
                std::size_t xi = ((static_cast<std::size_t>(n) * sh.c + c) * sh.h + ih) * sh.w + iw;
                std::size_t wi = ((static_cast<std::size_t>(k) * sh.c + c) * sh.r + r) * sh.s + s;
                sum += static_cast<double>(x[xi]) * static_cast<double>(w[wi]);
            }
        }
    }
    return sum;
}

std::vector<float> reference_convolution(const ConvShape& sh, const std::vector<float>& x,
                                         const std::vector<float>& w) {
    std::vector<float> y(sh.output_size());
    std::size_t i = 0;
    for (int n = 0; n < sh.n; ++n)
        for (int k = 0; k < sh.k; ++k)
            for (int oh = 0; oh < sh.out_h(); ++oh)
                for (int ow = 0; ow < sh.out_w(); ++ow)
                    y[i++] = static_cast<float>(reference_at(sh, x, w, n, k, oh, ow));
    return y;
}

Comparison compare_with_reference(const ConvShape& sh, const std::vector<float>& x,
                                  const std::vector<float>& w, const std::vector<float>& result,
                                  std::size_t max_checked) {
    Comparison cmp;
    std::size_t total = sh.output_size();
    if (result.size() != total) return cmp;
    std::size_t count = (max_checked == 0 || max_checked >= total) ? total : max_checked;
    const std::size_t oh_count = static_cast<std::size_t>(sh.out_h());
    const std::size_t ow_count = static_cast<std::size_t>(sh.out_w());
    for (std::size_t j = 0; j < count; ++j) {
        // Evenly spread indices; when count == total this is every index.
        std::size_t index = count == total ? j : j * total / count;
        std::size_t rest = index;
        int ow = static_cast<int>(rest % ow_count);
        rest /= ow_count;
        int oh = static_cast<int>(rest % oh_count);
        rest /= oh_count;
        int k = static_cast<int>(rest % static_cast<std::size_t>(sh.k));
        int n = static_cast<int>(rest / static_cast<std::size_t>(sh.k));
        double expected = reference_at(sh, x, w, n, k, oh, ow);
        double got = result[index];
        ++cmp.checked;
        cmp.max_abs_reference = std::max(cmp.max_abs_reference, std::fabs(expected));
        if (!std::isfinite(got)) {
            if (cmp.non_finite++ == 0) cmp.worst_index = index;
            continue;
        }
        double error = std::fabs(got - expected);
        if (error > cmp.max_abs_error) {
            cmp.max_abs_error = error;
            cmp.worst_index = index;
        }
    }
    // A reference that is all zeros would make any error infinite; the test data never is.
    cmp.relative_error =
        cmp.max_abs_reference > 0 ? cmp.max_abs_error / cmp.max_abs_reference : cmp.max_abs_error;
    cmp.matched =
        cmp.checked > 0 && cmp.non_finite == 0 && cmp.relative_error <= kRelativeTolerance;
    return cmp;
}

} // namespace cvm::probe
