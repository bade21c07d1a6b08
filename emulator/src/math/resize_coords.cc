// resize_coords.cc - ONNX Resize's coordinate transformations and nearest roundings, evaluated in float
// with onnxruntime's expressions so that nearest picks the same pixel where a coordinate lands within a
// rounding error of an integer. This file is compiled without FMA clones on purpose: a contracted
// multiply-add would round differently.
#include "math/resize_coords.h"

#include <algorithm>
#include <cmath>

namespace accel_emu {
namespace resize {
namespace {

float original(const Params& p, float x) {
    const float s = p.scale, len_in = static_cast<float>(p.in), len_out = static_cast<float>(p.out);
    switch (p.coord) {
        case ResizeCoord::Asymmetric: return x / s;
        case ResizeCoord::AlignCorners: return len_out == 1 ? 0.f : x * (len_in - 1) / (len_out - 1);
        case ResizeCoord::PytorchHalfPixel: return len_out > 1 ? (x + 0.5f) / s - 0.5f : 0.f;
        case ResizeCoord::TfHalfPixelForNearest: return (x + 0.5f) / s;
        case ResizeCoord::HalfPixelSymmetric: {
            // The output's centre stays on the input's when the size was rounded down from in * scale.
            const float adjustment = len_out / (s * len_in);
            const float offset = len_in / 2 * (1 - adjustment);
            return static_cast<float>(offset + (x + 0.5) / s - 0.5);
        }
        case ResizeCoord::HalfPixel: break;
    }
    return (x + 0.5f) / s - 0.5f;
}

// A coordinate pulled into [-1, in]: every index it rounds to is clamped to [0, in - 1] afterwards, so this
// changes no result, and it keeps huge or NaN values (absurd scales) away from integer conversion.
float bounded(const Params& p, float x) {
    const float hi = static_cast<float>(p.in);
    return x >= -1.f ? std::min(x, hi) : -1.f;
}

// onnxruntime treats a coordinate within 1e-6 of a half as a tie, so that ties the float formulas miss by
// a rounding error (for example 2 / (4 / 7.f)) still go the preferred way.
constexpr float kTieTolerance = 1e-6f;

int64_t rounded(NearestRounding r, float x) {
    const float lo = std::floor(x);
    switch (r) {
        case NearestRounding::Floor: return static_cast<int64_t>(lo);
        case NearestRounding::Ceil: return static_cast<int64_t>(std::ceil(x));
        case NearestRounding::RoundPreferFloor:
        case NearestRounding::RoundPreferCeil: break;
    }
    if (std::fabs(x - lo - 0.5f) <= kTieTolerance)
        return static_cast<int64_t>(lo) + (r == NearestRounding::RoundPreferCeil ? 1 : 0);
    return static_cast<int64_t>(std::round(x));
}

}  // namespace

void nearest_table(const Params& p, int64_t* idx) {
    for (int64_t o = 0; o < p.out; ++o) {
        if (p.scale == 1.f) {
            idx[o] = o;
            continue;
        }
        const int64_t i = rounded(p.round, bounded(p, original(p, static_cast<float>(o))));
        idx[o] = std::clamp<int64_t>(i, 0, p.in - 1);
    }
}

void linear_table(const Params& p, LinearTap* taps) {
    const float last = static_cast<float>(p.in - 1);
    for (int64_t o = 0; o < p.out; ++o) {
        const float x = p.scale == 1.f ? static_cast<float>(o) : original(p, static_cast<float>(o));
        const float c = x >= 0.f ? std::min(x, last) : 0.f;  // also maps NaN to 0
        LinearTap& t = taps[o];
        t.i0 = std::min(static_cast<int64_t>(c), p.in - 1);
        t.i1 = std::min(t.i0 + 1, p.in - 1);
        if (t.i0 == t.i1) {
            t.w0 = t.w1 = 0.5f;
        } else {
            t.w0 = std::fabs(c - static_cast<float>(t.i1));  // the nearer neighbour weighs more
            t.w1 = std::fabs(c - static_cast<float>(t.i0));
        }
    }
}

}  // namespace resize
}  // namespace accel_emu
