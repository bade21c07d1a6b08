// scatter.cc - gathering and scattering by index tuples (FORMAT.md ops 71-74, minor 6): gathernd, scatternd,
// scatterelements and tensorscatter. Elements are moved by their size (any dtype); a scatter with a reduction
// computes on float32 or an integer dtype. Indices may come at run time (ops.h): each is bounded as it is read,
// a negative one counts from the end, and the first outside -dim..dim-1 stops the kernel and is reported
// (DataFault: the job fails naming it, as onnxruntime fails the run); Y is then left part written. Constant
// indices are checked at load.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "math/int_types.h"
#include "math/strided_copy.h"  // kern::dense_strides
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

using kern::cat;

using kern::no_scratch;

bool is_index_dtype(int64_t dtype) { return dtype == ACCEL_DTYPE_INT64 || dtype == ACCEL_DTYPE_INT32; }

// Element i of an int32 or int64 tensor at p.
inline int64_t index_at(const void* p, bool i32, int64_t i) {
    return i32 ? static_cast<const int32_t*>(p)[i] : static_cast<const int64_t*>(p)[i];
}

// The index as a position 0..dim-1 (negative ones count from the end), or -1 if outside -dim..dim-1.
inline int64_t position(int64_t v, int64_t dim) {
    const int64_t i = v < 0 ? v + dim : v;
    return static_cast<uint64_t>(i) < static_cast<uint64_t>(dim) ? i : -1;
}

// Constant indices are checked at load: element i is bounded by bound(i) (its dim), -dim..dim-1.
template <class Bound>
bool check_constant_indices(const Graph& g, const TensorDesc& ind, Bound bound, const char* op, std::string* err) {
    if (!kern::constant_known(g, ind)) return true;
    for (int64_t i = 0; i < ind.numel; ++i) {
        const int64_t v = kern::constant_index(g, ind, i), dim = bound(i);
        if (position(v, dim) < 0)
            return kern::fail(err, op, cat("index ", v, " at position ", i, " is outside -", dim, "..", dim - 1));
    }
    return true;
}

// The job fails after this node (ops.h): index `value` at position k of input `input`, outside axis `axis` of
// input 0 (dim elements).
// nonneg: the range is 0..dim-1.
void report_index(const KernelArgs& a, uint32_t input, int64_t k, int64_t value, int64_t dim, int axis,
                  bool nonneg = false) {
    DataFault f;
    f.what = "index";
    f.input = input;
    f.position = k;
    f.value = value;
    f.lo = nonneg ? 0 : -dim;
    f.hi = dim - 1;
    f.range_input = 0;
    f.range_axis = axis;
    a.report(f);
}

// Offsets (in elements) of an index tuple: the tuple's k components at idx[t*k ..], over X's dims from `first`
// (xs their dense strides). Returns the element offset, or -1 with *bad_c the component outside its dim.
int64_t tuple_offset(const void* idx, bool i32, int64_t t, int64_t k, const TensorDesc& x, int first, const int64_t* xs,
                     int64_t* bad_c) {
    int64_t off = 0;
    for (int64_t c = 0; c < k; ++c) {
        const int64_t p = position(index_at(idx, i32, t * k + c), x.dims[first + c]);
        if (p < 0) return *bad_c = c, -1;
        off += p * xs[first + c];
    }
    return off;
}

// ---- gathernd: Y[b, j, ..] = X[b, I[b, j, 0], .., I[b, j, k-1], ..], blocks of X.dims[batch_dims+k:]

bool validate_gathernd(const Graph& g, const Node& n, std::string* err) {
    const char* op = "gathernd";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& ind = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dtype(x, y, op, "input 0", err)) return false;
    if (!is_index_dtype(ind.dtype))
        return kern::fail(err, op, cat("indices dtype ", dtype_name(ind.dtype), " is not int32 or int64"));
    const int64_t b = GatherNDParams::of(n).batch_dims;
    if (ind.ndim < 1) return kern::fail(err, op, "indices are a scalar");
    if (b < 0 || b >= ind.ndim || b >= x.ndim)
        return kern::fail(err, op, cat("batch_dims ", b, " is outside 0..", std::min(x.ndim, ind.ndim) - 1));
    for (int i = 0; i < b; ++i)
        if (x.dims[i] != ind.dims[i])
            return kern::fail(err, op,
                              cat("batch dim ", i, " of the indices ", kern::dims_str(ind), " differs from input's ",
                                  kern::dims_str(x)));
    const int64_t k = ind.dims[ind.ndim - 1];
    if (k < 1 || k > x.ndim - b)
        return kern::fail(err, op, cat("indices' last dim ", k, " is outside 1..", x.ndim - b));
    const int rank = ind.ndim - 1 + x.ndim - static_cast<int>(b + k);
    bool ok = y.ndim == rank;
    for (int i = 0; ok && i < rank; ++i)
        ok = y.dims[i] == (i < ind.ndim - 1 ? ind.dims[i] : x.dims[b + k + i - (ind.ndim - 1)]);
    if (!ok)
        return kern::fail(err, op,
                          cat("output shape ", kern::dims_str(y), " is not the indices' ", kern::dims_str(ind),
                              " without their last dim, then input ", kern::dims_str(x), "'s dims from ", b + k));
    return check_constant_indices(g, ind, [&](int64_t i) { return x.dims[b + i % k]; }, op, err);
}

void run_gathernd(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& id = kern::in_desc(a, 1);
    const int b = static_cast<int>(GatherNDParams::of(*a.node).batch_dims);
    const int64_t k = id.dims[id.ndim - 1];
    int64_t xs[kMaxDims];
    kern::dense_strides(xd.dims, xd.ndim, xs);
    const size_t es = dtype_size(xd.dtype);
    const int64_t batches = kern::prod(xd.dims, 0, b);
    const int64_t tuples = kern::prod(id.dims, b, id.ndim - 1);  // per batch
    const size_t block = static_cast<size_t>(kern::prod(xd.dims, static_cast<int>(b + k), xd.ndim)) * es;
    const int64_t batch_stride = b > 0 ? xs[b - 1] : 0;
    const bool i32 = id.dtype == ACCEL_DTYPE_INT32;
    const auto* x = static_cast<const unsigned char*>(a.in[0]);
    auto* y = static_cast<unsigned char*>(a.out[0]);
    for (int64_t bi = 0; bi < batches; ++bi)
        for (int64_t t = 0; t < tuples; ++t, y += block) {
            const int64_t tt = bi * tuples + t;
            int64_t c = 0;
            const int64_t off = tuple_offset(a.in[1], i32, tt, k, xd, b, xs, &c);
            if (off < 0)
                return report_index(a, 1, tt * k + c, index_at(a.in[1], i32, tt * k + c), xd.dims[b + c],
                                    static_cast<int>(b + c));
            std::memcpy(y, x + (bi * batch_stride + off) * es, block);
        }
}

// ---- the reductions of scatternd and scatterelements: how update u meets element y

template <class T>
inline void combine(ScatterReduction r, T* y, T u) {
    switch (r) {
        case ScatterReduction::Add: *y = wrapping_add(*y, u); break;
        case ScatterReduction::Mul: *y = wrapping_mul(*y, u); break;
        // onnxruntime's std::max(u, y) and std::min(u, y): u unless y is strictly beyond it, so a NaN in U is
        // taken and a NaN already in Y is replaced.
        case ScatterReduction::Max: *y = u < *y ? *y : u; break;
        case ScatterReduction::Min: *y = *y < u ? *y : u; break;
        default: *y = u; break;
    }
}

// Elements of `size` bytes moved as one unsigned integer of that size (reduction none).
template <class F>
void dispatch_size(size_t size, F&& f) {
    switch (size) {
        case 1: return f(uint8_t{});
        case 2: return f(uint16_t{});
        case 4: return f(uint32_t{});
        default: return f(uint64_t{});
    }
}

// f(T{}) with T the type the scatter computes on: the dtype's own (reduction) or an unsigned one of its size.
template <class F>
void dispatch_scatter(int64_t dtype, ScatterReduction r, F&& f) {
    if (r == ScatterReduction::None) return dispatch_size(dtype_size(dtype), f);
    dispatch_numeric(dtype, f);
}

bool check_reduction(ScatterReduction r, const TensorDesc& x, const char* op, std::string* err) {
    if (!is_known(r)) return kern::fail(err, op, cat("reduction ", static_cast<int64_t>(r), " is not 0..4"));
    if (r != ScatterReduction::None && !is_numeric_dtype(x.dtype))
        return kern::fail(err, op,
                          cat("reduction ", static_cast<int64_t>(r), " on dtype ", dtype_name(x.dtype),
                              " (float32 or an integer dtype only)"));
    return true;
}

// The checks scatternd and scatterelements share: X, U and Y of one dtype, Y X's shape, I int32 or int64.
bool check_scatter_io(const Graph& g, const Node& n, const char* op, std::string* err) {
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& ind = *kern::input(g, n, 1);
    const TensorDesc& u = *kern::input(g, n, 2);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dtype(x, y, op, "input 0", err) || !kern::same_dtype(u, y, op, "input 2 (updates)", err) ||
        !kern::check_same_shape(x, y, op, err))
        return false;
    if (!is_index_dtype(ind.dtype))
        return kern::fail(err, op, cat("indices dtype ", dtype_name(ind.dtype), " is not int32 or int64"));
    return true;
}

// ---- scatternd: Y = X, then Y[I[j, 0], .., I[j, k-1], ..] = (or combined with) U[j, ..] for each j in order

bool validate_scatternd(const Graph& g, const Node& n, std::string* err) {
    const char* op = "scatternd";
    if (!check_scatter_io(g, n, op, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& ind = *kern::input(g, n, 1);
    const TensorDesc& u = *kern::input(g, n, 2);
    if (!check_reduction(ScatterNDParams::of(n).reduction, x, op, err)) return false;
    if (ind.ndim < 1) return kern::fail(err, op, "indices are a scalar");
    const int64_t k = ind.dims[ind.ndim - 1];
    if (k < 1 || k > x.ndim) return kern::fail(err, op, cat("indices' last dim ", k, " is outside 1..", x.ndim));
    const int rank = ind.ndim - 1 + x.ndim - static_cast<int>(k);
    bool ok = u.ndim == rank;
    for (int i = 0; ok && i < rank; ++i)
        ok = u.dims[i] == (i < ind.ndim - 1 ? ind.dims[i] : x.dims[k + i - (ind.ndim - 1)]);
    if (!ok)
        return kern::fail(err, op,
                          cat("updates shape ", kern::dims_str(u), " is not the indices' ", kern::dims_str(ind),
                              " without their last dim, then input ", kern::dims_str(x), "'s dims from ", k));
    return check_constant_indices(g, ind, [&](int64_t i) { return x.dims[i % k]; }, op, err);
}

void run_scatternd(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& id = kern::in_desc(a, 1);
    const ScatterReduction r = ScatterNDParams::of(*a.node).reduction;
    const int64_t k = id.dims[id.ndim - 1];
    int64_t xs[kMaxDims];
    kern::dense_strides(xd.dims, xd.ndim, xs);
    const int64_t tuples = id.numel / k;
    const int64_t block = kern::prod(xd.dims, static_cast<int>(k), xd.ndim);
    const bool i32 = id.dtype == ACCEL_DTYPE_INT32;
    std::memcpy(a.out[0], a.in[0], static_cast<size_t>(xd.numel) * dtype_size(xd.dtype));
    dispatch_scatter(xd.dtype, r, [&](auto t) {
        using T = decltype(t);
        const T* u = static_cast<const T*>(a.in[2]);
        T* y = static_cast<T*>(a.out[0]);
        for (int64_t j = 0; j < tuples; ++j, u += block) {
            int64_t c = 0;
            const int64_t off = tuple_offset(a.in[1], i32, j, k, xd, 0, xs, &c);
            if (off < 0)
                return report_index(a, 1, j * k + c, index_at(a.in[1], i32, j * k + c), xd.dims[c],
                                    static_cast<int>(c));
            T* dst = y + off;
            if (r == ScatterReduction::None) std::memcpy(dst, u, static_cast<size_t>(block) * sizeof(T));
            else
                for (int64_t e = 0; e < block; ++e) combine(r, dst + e, u[e]);
        }
    });
}

// ---- scatterelements: Y = X, then Y[j with its axis coordinate I[j]] = (or combined with) U[j], j in C order

bool validate_scatterelements(const Graph& g, const Node& n, std::string* err) {
    const char* op = "scatterelements";
    if (!check_scatter_io(g, n, op, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& ind = *kern::input(g, n, 1);
    const TensorDesc& u = *kern::input(g, n, 2);
    const ScatterElementsParams p = ScatterElementsParams::of(n);
    if (!check_reduction(p.reduction, x, op, err)) return false;
    if (p.nonnegative != 0 && p.nonnegative != 1)
        return kern::fail(err, op, cat("nonnegative is ", p.nonnegative, ", not 0 or 1"));
    if (x.ndim < 1) return kern::fail(err, op, "input 0 is a scalar");
    if (p.axis < 0 || p.axis >= x.ndim) return kern::fail(err, op, cat("axis ", p.axis, " outside 0..", x.ndim - 1));
    bool ok = ind.ndim == x.ndim;
    for (int i = 0; ok && i < x.ndim; ++i) ok = i == p.axis || ind.dims[i] <= x.dims[i];
    if (!ok)
        return kern::fail(err, op,
                          cat("indices shape ", kern::dims_str(ind), " is not of input ", kern::dims_str(x),
                              "'s rank with every dim but axis ", p.axis, "'s at most its"));
    if (!kern::same_dims(ind, u))
        return kern::fail(err, op,
                          cat("updates shape ", kern::dims_str(u), " differs from the indices' ", kern::dims_str(ind)));
    const int64_t dim = x.dims[p.axis];
    // (a negative constant index with nonnegative: the compiler refuses it, and the run reports it as any)
    return check_constant_indices(g, ind, [&](int64_t) { return dim; }, op, err);
}

void run_scatterelements(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& id = kern::in_desc(a, 1);
    const ScatterElementsParams p = ScatterElementsParams::of(*a.node);
    const int axis = static_cast<int>(p.axis);
    int64_t xs[kMaxDims];
    kern::dense_strides(xd.dims, xd.ndim, xs);
    const int64_t dim = xd.dims[axis];
    const bool i32 = id.dtype == ACCEL_DTYPE_INT32;
    std::memcpy(a.out[0], a.in[0], static_cast<size_t>(xd.numel) * dtype_size(xd.dtype));
    dispatch_scatter(xd.dtype, p.reduction, [&](auto t) {
        using T = decltype(t);
        const T* u = static_cast<const T*>(a.in[2]);
        T* y = static_cast<T*>(a.out[0]);
        int64_t pos[kMaxDims] = {0};
        int64_t base = 0;  // the offset in Y of pos with its axis coordinate 0
        for (int64_t j = 0; j < id.numel; ++j) {
            const int64_t v = index_at(a.in[1], i32, j);
            const int64_t i = v < 0 && p.nonnegative ? -1 : position(v, dim);
            if (i < 0) return report_index(a, 1, j, v, dim, axis, p.nonnegative != 0);
            combine(p.reduction, y + base + i * xs[axis], u[j]);
            for (int d = id.ndim - 1; d >= 0; --d) {  // the next position of I, in C order
                if (d != axis) base += xs[d];
                if (++pos[d] < id.dims[d]) break;
                if (d != axis) base -= pos[d] * xs[d];
                pos[d] = 0;
            }
        }
    });
}

// ---- tensorscatter: Y = X, then U's steps written along axis from W[b] (per batch b), linear or circular

bool validate_tensorscatter(const Graph& g, const Node& n, std::string* err) {
    const char* op = "tensorscatter";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& u = *kern::input(g, n, 1);
    const TensorDesc* w = kern::input(g, n, 2);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dtype(x, y, op, "input 0", err) || !kern::same_dtype(u, y, op, "input 1 (update)", err) ||
        !kern::check_same_shape(x, y, op, err))
        return false;
    const TensorScatterParams p = TensorScatterParams::of(n);
    if (x.ndim < 2) return kern::fail(err, op, cat("input 0 has rank ", x.ndim, ", not >= 2"));
    if (p.axis < 1 || p.axis >= x.ndim) return kern::fail(err, op, cat("axis ", p.axis, " outside 1..", x.ndim - 1));
    if (p.circular != 0 && p.circular != 1) return kern::fail(err, op, cat("circular is ", p.circular, ", not 0 or 1"));
    bool ok = u.ndim == x.ndim;
    for (int i = 0; ok && i < x.ndim; ++i) ok = i == p.axis ? u.dims[i] <= x.dims[i] : u.dims[i] == x.dims[i];
    if (!ok)
        return kern::fail(err, op,
                          cat("update shape ", kern::dims_str(u), " is not input ", kern::dims_str(x), "'s with axis ",
                              p.axis, " at most its"));
    if (w != nullptr && (w->dtype != ACCEL_DTYPE_INT64 || w->ndim != 1 || w->dims[0] != x.dims[0]))
        return kern::fail(
            err, op,
            cat("write indices ", kern::dims_str(*w), " ", dtype_name(w->dtype), " are not int64 [", x.dims[0], "]"));
    return true;
}

void run_tensorscatter(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& ud = kern::in_desc(a, 1);
    const TensorScatterParams p = TensorScatterParams::of(*a.node);
    const int axis = static_cast<int>(p.axis);
    const size_t es = dtype_size(xd.dtype);
    const int64_t batches = xd.dims[0], mid = kern::prod(xd.dims, 1, axis), len = xd.dims[axis];
    const int64_t steps = ud.dims[axis];
    const size_t inner = static_cast<size_t>(kern::prod(xd.dims, axis + 1, xd.ndim)) * es;  // bytes
    // nullptr when absent (an empty edge, or no third input at all)
    const auto* w = a.node->inputs.size() > 2 ? static_cast<const int64_t*>(a.in[2]) : nullptr;
    std::memcpy(a.out[0], a.in[0], static_cast<size_t>(xd.numel) * es);
    const auto* u = static_cast<const unsigned char*>(a.in[1]);
    auto* y = static_cast<unsigned char*>(a.out[0]);
    // Every W[b] is checked before anything is written beyond the copy: >= 0, and linear at most len - steps
    // (circular takes any start, modulo len, as onnxruntime).
    const int64_t hi = p.circular ? INT64_MAX : len - steps;
    for (int64_t b = 0; b < batches && w != nullptr; ++b)
        if (w[b] < 0 || w[b] > hi) {
            DataFault f;
            f.what = "write index";
            f.input = 2;
            f.position = b;
            f.value = w[b];
            f.lo = 0;
            f.hi = hi;
            return a.report(f);
        }
    for (int64_t b = 0; b < batches; ++b) {
        const int64_t start = w != nullptr ? w[b] % len : 0;  // linear: w[b] < len already
        for (int64_t m = 0; m < mid; ++m) {
            unsigned char* yrow = y + ((b * mid + m) * len) * inner;
            for (int64_t s = 0; s < steps; ++s, u += inner) {
                int64_t at = start + s;
                if (at >= len) at -= len;  // circular only (linear keeps start + s < len)
                std::memcpy(yrow + at * inner, u, inner);
            }
        }
    }
}

}  // namespace

const OpDef kGatherNDDef = {"gathernd", validate_gathernd, no_scratch, run_gathernd, nullptr, nullptr};
const OpDef kScatterNDDef = {"scatternd", validate_scatternd, no_scratch, run_scatternd, nullptr, nullptr};
const OpDef kScatterElementsDef = {
    "scatterelements", validate_scatterelements, no_scratch, run_scatterelements, nullptr, nullptr};
const OpDef kTensorScatterDef = {"tensorscatter", validate_tensorscatter, no_scratch, run_tensorscatter, nullptr,
                                 nullptr};

}  // namespace accel_emu
