// reduce.cc - see reduce.h. The shape is first reduced to alternating runs of kept and reduced dims
// (size-1 dims dropped, neighbours of the same kind merged), so the work is an outer odometer around one
// contiguous inner run: a reduced inner run is folded into one output (the last-axis and NCHW spatial
// cases), a kept inner run is combined element by element into an output row (leading or middle axes,
// NHWC spatial). Both inner loops vectorize. A sum (and so a mean) of a reduced inner run adds in
// onnxruntime's order, so that a layer norm's mean, say, has the same bits as there: quantized models
// round such values.
#include "math/reduce.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "math/fast_math.h"
#include "math/math_util.h"
#include "parallel.h"

namespace accel_emu {

ReduceRuns reduce_runs(const int64_t* dims, int ndim, int64_t mask) {
    ReduceRuns r;
    for (int i = 0; i < ndim; ++i) {
        if (dims[i] == 1) continue;
        const bool red = (mask >> i) & 1;
        if (red) r.count *= dims[i];
        if (r.m > 0 && r.red[r.m - 1] == red) {
            r.ext[r.m - 1] *= dims[i];
            continue;
        }
        r.ext[r.m] = dims[i], r.red[r.m] = red;
        ++r.m;
    }
    int64_t sx = 1, sy = 1;
    for (int k = r.m - 1; k >= 0; --k) {
        r.sx[k] = sx;
        r.sy[k] = r.red[k] ? 0 : sy;
        sx *= r.ext[k];
        if (!r.red[k]) sy *= r.ext[k];
    }
    return r;
}

namespace {

// Four floats as one value (gcc/clang vector extension: SSE registers, or NEON): the combiners below
// are written once for float and V4, and a fold keeps four V4 accumulators. (Written as loops over
// 16 partial floats instead, gcc vectorizes the NaN-aware max and min selects poorly: 4-5x slower.)
typedef float V4 __attribute__((vector_size(16)));

ACCEL_INLINE V4 load4(const float* p) {
    V4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
ACCEL_INLINE void store4(float* p, V4 v) { std::memcpy(p, &v, sizeof v); }

// What each element contributes (from x and, for log_sum_exp, the output's shift) and how
// contributions combine; `identity` starts every output. kVector: the map also takes V4.
struct Plain {
    static constexpr bool kVector = true;
    template <class T>
    ACCEL_INLINE T operator()(T v, float) const {
        return v;
    }
};
struct Square {
    static constexpr bool kVector = true;
    template <class T>
    ACCEL_INLINE T operator()(T v, float) const {
        return v * v;
    }
};
struct Magnitude {  // -0 stays -0, which adds as 0
    static constexpr bool kVector = true;
    template <class T>
    ACCEL_INLINE T operator()(T v, float) const {
        return v < 0.f ? -v : v;
    }
};
struct ShiftedExp {
    static constexpr bool kVector = false;
    ACCEL_INLINE float operator()(float v, float s) const { return kern::exp_approx(v - s); }
};
struct Add {
    static constexpr float identity = 0.f;
    template <class T>
    ACCEL_INLINE T operator()(T a, T v) const {
        return a + v;
    }
};
struct Mul {
    static constexpr float identity = 1.f;
    template <class T>
    ACCEL_INLINE T operator()(T a, T v) const {
        return a * v;
    }
};
struct Greater {  // NaN wins: once a NaN is in, a NaN stays
    static constexpr float identity = -kern::kInf;
    template <class T>
    ACCEL_INLINE T operator()(T a, T v) const {
        return (v > a) | (v != v) ? v : a;
    }
};
struct Less {
    static constexpr float identity = kern::kInf;
    template <class T>
    ACCEL_INLINE T operator()(T a, T v) const {
        return (v < a) | (v != v) ? v : a;
    }
};

// C over f(x[i], s) for i < n, in 16 partial results (the compiler may not reorder float math itself).
template <class F, class C>
ACCEL_INLINE float fold(const float* ACCEL_RESTRICT x, int64_t n, float s, F f, C c) {
    float r = C::identity;
    int64_t i = 0;
    if (n >= 16) {
        if constexpr (F::kVector) {
            V4 a0 = V4{} + C::identity, a1 = a0, a2 = a0, a3 = a0;
            for (; i + 16 <= n; i += 16) {
                a0 = c(a0, f(load4(x + i), s));
                a1 = c(a1, f(load4(x + i + 4), s));
                a2 = c(a2, f(load4(x + i + 8), s));
                a3 = c(a3, f(load4(x + i + 12), s));
            }
            a0 = c(c(a0, a1), c(a2, a3));
            r = c(c(a0[0], a0[1]), c(a0[2], a0[3]));
        } else {
            float p[16];
            for (int k = 0; k < 16; ++k) p[k] = C::identity;
            for (; i + 16 <= n; i += 16)
                for (int k = 0; k < 16; ++k) p[k] = c(p[k], f(x[i + k], s));
            for (int w = 8; w >= 1; w /= 2)
                for (int k = 0; k < w; ++k) p[k] = c(p[k], p[k + w]);
            r = p[0];
        }
    }
    for (; i < n; ++i) r = c(r, f(x[i], s));
    return r;
}

// The sum of x[0..n) in the order of onnxruntime's ReduceSum/ReduceMean over contiguous elements (Eigen's
// SSE reduction): from the first 16-byte aligned element (x[lead], lead = the elements before it, given by
// the caller from x's offset in a 64-byte aligned tensor), two 4-float accumulators over pairs of
// vectors, one more vector, the 4 lanes added as (0 + 2) + (1 + 3), then x[0..lead) and the tail in order.
// The same bits as onnxruntime, where a reduced run is a row of a contiguous tensor.
ACCEL_INLINE float eigen_sum(const float* ACCEL_RESTRICT x, int64_t n, int64_t lead) {
    lead = lead < n ? lead : n;
    const float* body = x + lead;
    const int64_t m = n - lead, end1 = m / 4 * 4, end2 = m / 8 * 8;
    if (end1 == 0) {  // too short for a vector: in order from the first element
        float r = x[0];
        for (int64_t i = 1; i < n; ++i) r += x[i];
        return r;
    }
    V4 a0 = load4(body);
    if (end1 > 4) {
        V4 a1 = load4(body + 4);
        for (int64_t i = 8; i < end2; i += 8) {
            a0 += load4(body + i);
            a1 += load4(body + i + 4);
        }
        a0 += a1;
        if (end1 > end2) a0 += load4(body + end2);
    }
    float r = (a0[0] + a0[2]) + (a0[1] + a0[3]);
    for (int64_t i = 0; i < lead; ++i) r += x[i];
    for (int64_t i = end1; i < m; ++i) r += body[i];
    return r;
}

// y[j] = C(y[j], f(x[r*ld + j], s[j])) over rows r < rows, for j < n; s is read only when SHIFT. The
// row is taken in chunks that stay in L1 while every input row passes, four input rows at a time.
template <bool SHIFT, class F, class C>
ACCEL_INLINE void combine_rows(const float* ACCEL_RESTRICT x, int64_t ld, int64_t rows, float* ACCEL_RESTRICT y,
                               const float* ACCEL_RESTRICT s, int64_t n, F f, C c) {
    constexpr int64_t kChunk = 512;
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
        const int64_t m = n - j0 < kChunk ? n - j0 : kChunk;
        float* ACCEL_RESTRICT yc = y + j0;
        const float* ACCEL_RESTRICT sc = SHIFT ? s + j0 : nullptr;
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4) {
            const float* ACCEL_RESTRICT x0 = x + r * ld + j0;
            const float* ACCEL_RESTRICT x1 = x0 + ld;
            const float* ACCEL_RESTRICT x2 = x1 + ld;
            const float* ACCEL_RESTRICT x3 = x2 + ld;
            int64_t j = 0;
            if constexpr (F::kVector) {
                for (; j + 4 <= m; j += 4) {
                    const V4 v = c(c(f(load4(x0 + j), 0.f), f(load4(x1 + j), 0.f)),
                                   c(f(load4(x2 + j), 0.f), f(load4(x3 + j), 0.f)));
                    store4(yc + j, c(load4(yc + j), v));
                }
            }
            for (; j < m; ++j) {
                const float sh = SHIFT ? sc[j] : 0.f;
                yc[j] = c(yc[j], c(c(f(x0[j], sh), f(x1[j], sh)), c(f(x2[j], sh), f(x3[j], sh))));
            }
        }
        for (; r < rows; ++r) {
            const float* ACCEL_RESTRICT x0 = x + r * ld + j0;
            int64_t j = 0;
            if constexpr (F::kVector)
                for (; j + 4 <= m; j += 4) store4(yc + j, c(load4(yc + j), f(load4(x0 + j), 0.f)));
            for (; j < m; ++j) yc[j] = c(yc[j], f(x0[j], SHIFT ? sc[j] : 0.f));
        }
    }
}

// The odometer's runs [0, walk) around the inner job, and how the work is cut across threads. Runs
// alternate, so a kept inner run has a reduced run just outside it, whose rows all land on the same output
// row: they are combined together (nrows of them, ld apart), the odometer walking the runs outside both.
struct Walk {
    int inner, walk;
    bool rows;           // the inner run is kept: rows combined element by element
    int64_t len, nrows, ld, outer;
    bool split_outer;    // parts are ranges of the outer walk (every walked run is kept: distinct outputs)
    bool split_columns;  // parts are ranges of the inner kept run (one outer step)
};

Walk walk_of(const ReduceRuns& r) {
    Walk w{};
    if (r.m == 0) return w;
    w.inner = r.m - 1;
    w.rows = !r.red[w.inner];
    w.walk = w.rows && w.inner > 0 ? w.inner - 1 : w.inner;
    w.len = r.ext[w.inner];
    w.nrows = w.walk < w.inner ? r.ext[w.walk] : 1;
    w.ld = w.walk < w.inner ? r.sx[w.walk] : 0;
    w.outer = kern::prod(r.ext, 0, w.walk);
    bool kept = true;
    for (int d = 0; d < w.walk; ++d) kept = kept && !r.red[d];
    w.split_outer = kept && w.outer > 1;
    w.split_columns = w.rows && w.outer == 1;
    return w;
}

// A part of the work: outer steps [o0, o1), columns [j0, j1) of a kept inner run.
struct Span { int64_t o0, o1, j0, j1; };

// y (shaped as the kept runs) = C(y, C over the reduced runs of f(x, shift)) for the span's outputs; shift
// is y-shaped (SHIFT only). Each output's order of combination does not depend on the span.
template <bool SHIFT, class F, class C>
ACCEL_HOT void reduce_into(const ReduceRuns& r, const Walk& w, const Span& sp, const float* ACCEL_RESTRICT x,
                           float* ACCEL_RESTRICT y, const float* ACCEL_RESTRICT shift, F f, C c) {
    if (r.m == 0) {  // every dim is 1
        y[0] = c(y[0], f(x[0], SHIFT ? shift[0] : 0.f));
        return;
    }
    int64_t idx[kMaxDims] = {0};
    int64_t ox = 0, oy = 0;
    for (int64_t d = w.walk - 1, rest = sp.o0; d >= 0; --d) {  // the odometer at step o0
        idx[d] = rest % r.ext[d];
        rest /= r.ext[d];
        ox += idx[d] * r.sx[d];
        oy += idx[d] * r.sy[d];
    }
    for (int64_t o = sp.o0; o < sp.o1; ++o) {
        if (w.rows)
            combine_rows<SHIFT>(x + ox + sp.j0, w.ld, w.nrows, y + oy + sp.j0, SHIFT ? shift + oy + sp.j0 : nullptr,
                                sp.j1 - sp.j0, f, c);
        else if constexpr (std::is_same_v<F, Plain> && std::is_same_v<C, Add>)
            y[oy] += eigen_sum(x + ox, w.len, (4 - ox % 4) % 4);
        else y[oy] = c(y[oy], fold(x + ox, w.len, SHIFT ? shift[oy] : 0.f, f, c));
        for (int d = w.walk - 1; d >= 0; --d) {  // odometer over the outer runs
            ox += r.sx[d];
            oy += r.sy[d];
            if (++idx[d] < r.ext[d]) break;
            ox -= r.sx[d] * r.ext[d];
            oy -= r.sy[d] * r.ext[d];
            idx[d] = 0;
        }
    }
}

ACCEL_HOT void divide(float* y, int64_t n, float d) {
    for (int64_t i = 0; i < n; ++i) y[i] /= d;
}
ACCEL_HOT void square_root(float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = __builtin_sqrtf(y[i]);
}
// A non-finite max is no use as a shift: 0 instead (all -inf then gives log 0 = -inf, any +inf gives inf).
ACCEL_HOT void finite_or_zero(float* m, int64_t n) {
    for (int64_t i = 0; i < n; ++i) m[i] = m[i] - m[i] == 0.f ? m[i] : 0.f;
}
ACCEL_HOT void log_plus(float* y, const float* m, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = kern::log_approx(y[i]) + m[i];
}

}  // namespace

namespace {

// Fills y[first, first + n) (and scratch's for log_sum_exp): the outputs of the span, which are these and no
// others.
void reduce_span(ReduceFn fn, const ReduceRuns& r, const Walk& w, const Span& sp, const float* x, float* y_all,
                 int64_t first, int64_t n, float* scratch) {
    float* y = y_all + first;
    auto init = [n](float* v, float identity) {
        for (int64_t i = 0; i < n; ++i) v[i] = identity;
    };
    switch (fn) {
        case ReduceFn::Mean:
            init(y, Add::identity);
            reduce_into<false>(r, w, sp, x, y_all, nullptr, Plain{}, Add{});
            divide(y, n, static_cast<float>(r.count));
            break;
        case ReduceFn::Sum:
            init(y, Add::identity);
            reduce_into<false>(r, w, sp, x, y_all, nullptr, Plain{}, Add{});
            break;
        case ReduceFn::Max:
            init(y, Greater::identity);
            reduce_into<false>(r, w, sp, x, y_all, nullptr, Plain{}, Greater{});
            break;
        case ReduceFn::Min:
            init(y, Less::identity);
            reduce_into<false>(r, w, sp, x, y_all, nullptr, Plain{}, Less{});
            break;
        case ReduceFn::Prod:
            init(y, Mul::identity);
            reduce_into<false>(r, w, sp, x, y_all, nullptr, Plain{}, Mul{});
            break;
        case ReduceFn::SumSquare:
            init(y, Add::identity);
            reduce_into<false>(r, w, sp, x, y_all, nullptr, Square{}, Add{});
            break;
        case ReduceFn::L1:
            init(y, Add::identity);
            reduce_into<false>(r, w, sp, x, y_all, nullptr, Magnitude{}, Add{});
            break;
        case ReduceFn::L2:
            init(y, Add::identity);
            reduce_into<false>(r, w, sp, x, y_all, nullptr, Square{}, Add{});
            square_root(y, n);
            break;
        case ReduceFn::LogSumExp: {
            float* m = scratch + first;
            init(m, Greater::identity);
            reduce_into<false>(r, w, sp, x, scratch, nullptr, Plain{}, Greater{});
            finite_or_zero(m, n);
            init(y, Add::identity);
            reduce_into<true>(r, w, sp, x, y_all, scratch, ShiftedExp{}, Add{});
            log_plus(y, m, n);
            break;
        }
    }
}

}  // namespace

void reduce(ReduceFn fn, const ReduceRuns& r, const float* x, float* y, int64_t ny, float* scratch, const Par& par) {
    const Walk w = walk_of(r);
    const int64_t numel = kern::prod(r.ext, 0, r.m);
    // Outputs of outer step o: [o * step, o * step + step); of columns [j0, j1) with one step: [j0, j1).
    const int64_t step = w.rows ? w.len : 1;
    auto run = [&](const Span& sp) {
        const int64_t first = sp.o0 * step + sp.j0, last = (sp.o1 - 1) * step + sp.j1;
        reduce_span(fn, r, w, sp, x, y, first, last - first, scratch);
    };
    if (w.split_outer) {
        par.for_ranges(w.outer, split_parts(w.outer, numel, kMinElemsPerPart),
                       [&](int64_t o0, int64_t o1, int) { run({o0, o1, 0, step == 1 ? 1 : w.len}); });
    } else if (w.split_columns) {
        constexpr int64_t kUnit = 64;  // columns: whole vectors, and whole cache lines of the output
        const int64_t units = (w.len + kUnit - 1) / kUnit;
        par.for_ranges(units, split_parts(units, numel, kMinElemsPerPart),
                       [&](int64_t u0, int64_t u1, int) { run({0, 1, u0 * kUnit, std::min(w.len, u1 * kUnit)}); });
    } else {
        // One part: every output at once (the walk holds a reduced run, or everything folds into one value).
        reduce_span(fn, r, w, {0, r.m == 0 ? 1 : w.outer, 0, w.rows ? w.len : 1}, x, y, 0, ny, scratch);
    }
}

}  // namespace accel_emu
