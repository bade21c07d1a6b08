// layernorm_ort.cc - see layernorm_ort.h. onnxruntime's order of operations, written out lane by lane: its
// kernel's vector lanes are the arrays below, its horizontal sums the fixed trees, its fused multiply-adds
// fused(), and every other multiply and add rounded on its own (exact_rounding.h: no contraction here).
#include "math/layernorm_ort.h"

#include "math/exact_rounding.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

// A fused multiply-add and a square root as gcc's and clang's builtins, which each ISA clone expands in place
// (std::fma and std::sqrt stay calls there: they are not inlined across the clones' target options).
ACCEL_INLINE float fused(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
ACCEL_INLINE float root(float x) { return __builtin_sqrtf(x); }

// onnxruntime runs its vector kernel (MLAS, AVX2) on rows of at least this many elements.
constexpr int64_t kVectorRow = 8;

// The mean: four double lanes over the whole groups of four, summed (0 + 2) + (1 + 3), then the rest in order.
ACCEL_INLINE float row_mean(const float* x, int64_t n) {
    double lane[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; ++j) lane[j] += static_cast<double>(x[i + j]);
    double sum = (lane[0] + lane[2]) + (lane[1] + lane[3]);
    for (; i < n; ++i) sum += static_cast<double>(x[i]);
    return static_cast<float>(sum / static_cast<double>(n));
}

// The sum of squared deviations: eight float lanes of fma(d, d, acc) over the whole groups of eight, summed
// ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)); then the rest in order: when four or more remain, the first four
// squared on their own and added one by one, and every later one (all of them when fewer than four remain)
// a fused multiply-add (how the compiler built onnxruntime's scalar tail).
ACCEL_INLINE float row_sq_dev(const float* x, int64_t n, float mean) {
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) {
            const float d = x[i + j] - mean;
            lane[j] = fused(d, d, lane[j]);
        }
    float sum = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
    if (n - i >= 4)
        for (const int64_t end = i + 4; i < end; ++i) {
            const float d = x[i] - mean;
            const float sq = d * d;
            sum += sq;
        }
    for (; i < n; ++i) {
        const float d = x[i] - mean;
        sum = fused(d, d, sum);
    }
    return sum;
}

// A row onnxruntime's vector kernel takes (8 elements or more).
ACCEL_INLINE void vector_row(const float* x, const float* s, const float* b, float* y, int64_t n, float eps,
                             float* mean_out, float* inv_out) {
    const float mean = row_mean(x, n);
    const float var = row_sq_dev(x, n, mean) / static_cast<float>(n);
    const float inv = 1.0f / root(var + eps);
    if (b != nullptr)
        for (int64_t i = 0; i < n; ++i) y[i] = fused((x[i] - mean) * inv, s[i], b[i]);
    else
        for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] - mean) * inv) * s[i];
    *mean_out = mean;
    *inv_out = inv;
}

// A shorter row, which onnxruntime computes in its operator's own loop: the mean and the sum of squared
// deviations by Welford's update in float, Y = (X - mean) / std_dev * S + B with a division.
ACCEL_INLINE void short_row(const float* x, const float* s, const float* b, float* y, int64_t n, float eps,
                            float* mean_out, float* inv_out) {
    float mean = 0.f, m2 = 0.f;
    for (int64_t i = 0; i < n; ++i) {
        const float delta = x[i] - mean;
        mean += delta / static_cast<float>(i + 1);
        const float delta2 = x[i] - mean;
        const float term = delta * delta2;
        m2 += term;
    }
    const float std_dev = root(m2 / static_cast<float>(n) + eps);
    if (b != nullptr)
        for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) / std_dev * s[i] + b[i];
    else
        for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) / std_dev * s[i];
    *mean_out = mean;
    *inv_out = 1.0f / std_dev;
}

// The rows, compiled for each ISA clone (math_util.h): fused() is one instruction where the clone has FMA, a
// library call otherwise, and exact either way; the lanes are explicit, so vectorizing does not reorder a sum.
ACCEL_HOT void normalize_rows(const float* x, const float* s, const float* b, float* y, float* mean_out,
                              float* inv_std_dev_out, int64_t rows, int64_t n, float eps) {
    for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
        float mean, inv;
        if (n >= kVectorRow) vector_row(x, s, b, y, n, eps, &mean, &inv);
        else short_row(x, s, b, y, n, eps, &mean, &inv);
        if (mean_out != nullptr) mean_out[r] = mean;
        if (inv_std_dev_out != nullptr) inv_std_dev_out[r] = inv;
    }
}

}  // namespace

// A plain function in front of the clones: an ifunc symbol would otherwise be exported from the driver.
void layernorm_rows_ort(const float* x, const float* s, const float* b, float* y, float* mean_out,
                        float* inv_std_dev_out, int64_t rows, int64_t n, float eps) {
    normalize_rows(x, s, b, y, mean_out, inv_std_dev_out, rows, n, eps);
}

}  // namespace accel_emu
