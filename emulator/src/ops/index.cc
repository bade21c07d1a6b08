// index.cc - the index ops (FORMAT.md ops 44-47, minor 3, and 59, minor 5): argreduce (ArgMax/ArgMin), topk,
// cumsum, cumprod and onehot. They compute on integers as well as float32 and write int64 indices. None
// reports a data fault (ops.h): onehot reads run-time indices, but ONNX defines the result of one outside
// -depth..depth-1 (a line of off values, as onnxruntime gives), so that is what it gives.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "math/int_types.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

using kern::no_scratch;

bool is_f32_i32_i64(int64_t dtype) {
    return dtype == ACCEL_DTYPE_FLOAT32 || dtype == ACCEL_DTYPE_INT32 || dtype == ACCEL_DTYPE_INT64;
}

// a > b in the order where NaN is larger than every number and equal to NaN (numpy's sort order).
template <class T>
inline bool nan_greater(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
    }
    return a > b;
}
// a < b in the order where NaN is smaller than every number (argmin's: a NaN is the minimum, as numpy).
template <class T>
inline bool nan_less(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
    }
    return a < b;
}

// Y has X's dims with `axis` set to `size` (keep) or, if allowed, removed.
bool check_axis_shape(const TensorDesc& x, const TensorDesc& y, int64_t axis, int64_t size, bool may_drop,
                      const char* op, const char* what, std::string* err) {
    bool ok = false;
    if (y.ndim == x.ndim) {
        ok = true;
        for (int i = 0; ok && i < x.ndim; ++i) ok = y.dims[i] == (i == axis ? size : x.dims[i]);
    }
    if (!ok && may_drop && y.ndim == x.ndim - 1) {
        ok = true;
        for (int i = 0; ok && i < y.ndim; ++i) ok = y.dims[i] == x.dims[i < axis ? i : i + 1];
    }
    if (!ok)
        return kern::fail(
            err, op,
            kern::cat(what, " shape ", kern::dims_str(y), " is not input ", kern::dims_str(x), " with axis ", axis,
                      may_drop ? " set to 1 or removed" : " set to ", may_drop ? "" : std::to_string(size)));
    return true;
}

bool check_axis(const TensorDesc& x, int64_t axis, const char* op, std::string* err) {
    if (x.ndim < 1) return kern::fail(err, op, "input 0 is a scalar");
    if (axis < 0 || axis >= x.ndim) return kern::fail(err, op, kern::cat("axis ", axis, " outside 0..", x.ndim - 1));
    return true;
}

bool check_flag(int64_t v, const char* name, const char* op, std::string* err) {
    if (v == 0 || v == 1) return true;
    return kern::fail(err, op, kern::cat(name, " is ", v, ", not 0 or 1"));
}

// ---- argreduce: the index of the largest or smallest element along an axis

bool validate_argreduce(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "argreduce";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    const ArgReduceParams p = ArgReduceParams::of(n);
    if (!check_axis(x, p.axis, op, err) || !check_flag(p.select_min, "select_min", op, err) ||
        !check_flag(p.select_last, "select_last", op, err))
        return false;
    if (!is_numeric_dtype(x.dtype))
        return kern::fail(err, op, cat("input dtype ", dtype_name(x.dtype), " is not float32 or an integer type"));
    if (y.dtype != ACCEL_DTYPE_INT64)
        return kern::fail(err, op, cat("output dtype ", dtype_name(y.dtype), " is not int64"));
    return check_axis_shape(x, y, p.axis, 1, true, op, "output", err);
}

// y[o, j] = the index i of the extreme x[o, i, j]: one pass over i, every inner position j at a time.
template <class T, bool Min, bool Last>
void argreduce_lines(const T* x, int64_t outer, int64_t dim, int64_t inner, int64_t* y) {
    for (int64_t o = 0; o < outer; ++o, x += dim * inner, y += inner) {
        for (int64_t j = 0; j < inner; ++j) y[j] = 0;
        for (int64_t i = 1; i < dim; ++i) {
            const T* row = x + i * inner;
            for (int64_t j = 0; j < inner; ++j) {
                const T v = row[j], best = x[y[j] * inner + j];
                bool take;
                if constexpr (Min) take = Last ? !nan_less(best, v) : nan_less(v, best);
                else take = Last ? !nan_greater(best, v) : nan_greater(v, best);
                if (take) y[j] = i;
            }
        }
    }
}

void run_argreduce(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const ArgReduceParams p = ArgReduceParams::of(*a.node);
    const int axis = static_cast<int>(p.axis);
    const int64_t outer = kern::prod(xd.dims, 0, axis), dim = xd.dims[axis];
    const int64_t inner = kern::prod(xd.dims, axis + 1, xd.ndim);
    auto* y = static_cast<int64_t*>(a.out[0]);
    dispatch_numeric(xd.dtype, [&](auto t) {
        using T = decltype(t);
        const T* x = static_cast<const T*>(a.in[0]);
        if (p.select_min) {
            if (p.select_last) argreduce_lines<T, true, true>(x, outer, dim, inner, y);
            else argreduce_lines<T, true, false>(x, outer, dim, inner, y);
        } else {
            if (p.select_last) argreduce_lines<T, false, true>(x, outer, dim, inner, y);
            else argreduce_lines<T, false, false>(x, outer, dim, inner, y);
        }
    });
}

// ---- topk: the k largest or smallest elements along an axis and their indices

bool validate_topk(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "topk";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& v = kern::output(g, n, 0);
    const TensorDesc& i = kern::output(g, n, 1);
    const TopKParams p = TopKParams::of(n);
    if (!check_axis(x, p.axis, op, err) || !check_flag(p.largest, "largest", op, err) ||
        !check_flag(p.sorted, "sorted", op, err))
        return false;
    if (p.k < 1 || p.k > x.dims[p.axis])
        return kern::fail(err, op, cat("k ", p.k, " outside 1..", x.dims[p.axis], " (axis ", p.axis, ")"));
    if (!is_numeric_dtype(x.dtype))
        return kern::fail(err, op, cat("input dtype ", dtype_name(x.dtype), " is not float32 or an integer type"));
    if (!kern::same_dtype(x, v, op, "input 0", err)) return false;
    if (i.dtype != ACCEL_DTYPE_INT64)
        return kern::fail(err, op, cat("output 1 dtype ", dtype_name(i.dtype), " is not int64"));
    return check_axis_shape(x, v, p.axis, p.k, false, op, "output 0", err) &&
           check_axis_shape(x, i, p.axis, p.k, false, op, "output 1", err);
}

size_t topk_scratch(const Graph& g, const Node& n) {
    return static_cast<size_t>(g.tensors[n.inputs[0]].dims[TopKParams::of(n).axis]) * sizeof(int64_t);
}

template <class T>
void topk_lines(const T* x, int64_t outer, int64_t dim, int64_t inner, int64_t k, bool largest, int64_t* order, T* v,
                int64_t* ind) {
    for (int64_t o = 0; o < outer; ++o, x += dim * inner, v += k * inner, ind += k * inner)
        for (int64_t j = 0; j < inner; ++j) {
            const T* line = x + j;
            for (int64_t i = 0; i < dim; ++i) order[i] = i;
            // A total order: the value's (NaN above every number), then the lower index first.
            auto before = [&](int64_t a, int64_t b) {
                const T va = line[a * inner], vb = line[b * inner];
                if (largest) {
                    if (nan_greater(va, vb)) return true;
                    if (nan_greater(vb, va)) return false;
                } else {
                    if (nan_greater(vb, va)) return true;
                    if (nan_greater(va, vb)) return false;
                }
                return a < b;
            };
            std::partial_sort(order, order + k, order + dim, before);
            for (int64_t r = 0; r < k; ++r) {
                v[r * inner + j] = line[order[r] * inner];
                ind[r * inner + j] = order[r];
            }
        }
}

void run_topk(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TopKParams p = TopKParams::of(*a.node);
    const int axis = static_cast<int>(p.axis);
    const int64_t outer = kern::prod(xd.dims, 0, axis), dim = xd.dims[axis];
    const int64_t inner = kern::prod(xd.dims, axis + 1, xd.ndim);
    auto* order = static_cast<int64_t*>(a.scratch);
    auto* ind = static_cast<int64_t*>(a.out[1]);
    dispatch_numeric(xd.dtype, [&](auto t) {
        using T = decltype(t);
        topk_lines(static_cast<const T*>(a.in[0]), outer, dim, inner, p.k, p.largest != 0, order,
                   static_cast<T*>(a.out[0]), ind);
    });
}

// ---- cumsum, cumprod: running sums or products along an axis

// P: CumSumParams or CumProdParams (the same fields).
template <class P>
constexpr bool kProduct = std::is_same_v<P, CumProdParams>;

template <class P>
bool validate_cumulative(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = kProduct<P> ? "cumprod" : "cumsum";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    const P p = P::of(n);
    if (!check_axis(x, p.axis, op, err) || !check_flag(p.exclusive, "exclusive", op, err) ||
        !check_flag(p.reverse, "reverse", op, err))
        return false;
    if (!is_f32_i32_i64(x.dtype))
        return kern::fail(err, op, cat("input dtype ", dtype_name(x.dtype), " is not float32, int32 or int64"));
    return kern::same_dtype(x, y, op, "input 0", err) && kern::check_same_shape(x, y, op, err);
}

template <bool kProd, class T>
void cumulative_lines(const T* x, int64_t outer, int64_t dim, int64_t inner, bool exclusive, bool reverse, T* y) {
    const int64_t first = reverse ? dim - 1 : 0, step = reverse ? -1 : 1;
    for (int64_t o = 0; o < outer; ++o, x += dim * inner, y += dim * inner) {
        T* y0 = y + first * inner;
        const T* x0 = x + first * inner;
        for (int64_t j = 0; j < inner; ++j) y0[j] = exclusive ? T(kProd ? 1 : 0) : x0[j];
        for (int64_t c = 1; c < dim; ++c) {
            const int64_t i = first + c * step, prev = i - step;
            T* yi = y + i * inner;
            const T* yp = y + prev * inner;
            const T* xi = x + (exclusive ? prev : i) * inner;
            for (int64_t j = 0; j < inner; ++j) yi[j] = kProd ? wrapping_mul(yp[j], xi[j]) : wrapping_add(yp[j], xi[j]);
        }
    }
}

template <class P>
void run_cumulative(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const P p = P::of(*a.node);
    const int axis = static_cast<int>(p.axis);
    const int64_t outer = kern::prod(xd.dims, 0, axis), dim = xd.dims[axis];
    const int64_t inner = kern::prod(xd.dims, axis + 1, xd.ndim);
    const bool ex = p.exclusive != 0, rev = p.reverse != 0;
    switch (xd.dtype) {
        case ACCEL_DTYPE_FLOAT32:
            return cumulative_lines<kProduct<P>>(static_cast<const float*>(a.in[0]), outer, dim, inner, ex, rev,
                                                 static_cast<float*>(a.out[0]));
        case ACCEL_DTYPE_INT32:
            return cumulative_lines<kProduct<P>>(static_cast<const int32_t*>(a.in[0]), outer, dim, inner, ex, rev,
                                                 static_cast<int32_t*>(a.out[0]));
        default:
            return cumulative_lines<kProduct<P>>(static_cast<const int64_t*>(a.in[0]), outer, dim, inner, ex, rev,
                                                 static_cast<int64_t*>(a.out[0]));
    }
}

// ---- onehot: Y[o, d, j] = on if index(o, j) is d, else off

bool validate_onehot(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "onehot";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& ind = *kern::input(g, n, 0);
    const TensorDesc& val = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const OneHotParams p = OneHotParams::of(n);
    if (ind.dtype != ACCEL_DTYPE_INT32 && ind.dtype != ACCEL_DTYPE_INT64 && ind.dtype != ACCEL_DTYPE_FLOAT32)
        return kern::fail(err, op, cat("indices dtype ", dtype_name(ind.dtype), " is not int32, int64 or float32"));
    if (val.numel != 2) return kern::fail(err, op, cat("values have ", val.numel, " elements, not 2 (off, on)"));
    if (!kern::same_dtype(val, y, op, "input 1 (values)", err)) return false;
    if (p.depth < 1) return kern::fail(err, op, cat("depth ", p.depth, " is not >= 1"));
    if (p.axis < 0 || p.axis > ind.ndim)
        return kern::fail(err, op, cat("axis ", p.axis, " outside 0..", int(ind.ndim)));
    bool ok = y.ndim == ind.ndim + 1;
    for (int i = 0; ok && i < y.ndim; ++i)
        ok = y.dims[i] == (i < p.axis ? ind.dims[i] : i == p.axis ? p.depth : ind.dims[i - 1]);
    if (!ok)
        return kern::fail(err, op,
                          cat("output shape ", kern::dims_str(y), " is not the indices' ", kern::dims_str(ind),
                              " with ", p.depth, " inserted at axis ", p.axis));
    return true;
}

// The index as a position 0..depth-1, or -1 if outside -depth..depth-1 (NaN included).
template <class I>
inline int64_t onehot_position(I v, int64_t depth) {
    int64_t i;
    if constexpr (std::is_floating_point_v<I>) {
        if (!(v > -static_cast<double>(depth) - 1.0 && v < static_cast<double>(depth))) return -1;
        i = static_cast<int64_t>(v);  // truncation toward zero
    } else {
        i = static_cast<int64_t>(v);
    }
    if (i < 0) i += depth;
    return i >= 0 && i < depth ? i : -1;
}

template <class T, class I>
void onehot_lines(const I* ind, int64_t outer, int64_t depth, int64_t inner, const T* val, T* y) {
    const T off = val[0], on = val[1];
    for (int64_t o = 0; o < outer; ++o, ind += inner, y += depth * inner) {
        for (int64_t k = 0; k < depth * inner; ++k) y[k] = off;
        for (int64_t j = 0; j < inner; ++j) {
            const int64_t d = onehot_position(ind[j], depth);
            if (d >= 0) y[d * inner + j] = on;
        }
    }
}

template <class T>
void onehot_typed(const KernelArgs& a, int64_t outer, int64_t depth, int64_t inner) {
    const T* val = static_cast<const T*>(a.in[1]);
    T* y = static_cast<T*>(a.out[0]);
    switch (kern::in_desc(a, 0).dtype) {
        case ACCEL_DTYPE_INT32: return onehot_lines(static_cast<const int32_t*>(a.in[0]), outer, depth, inner, val, y);
        case ACCEL_DTYPE_INT64: return onehot_lines(static_cast<const int64_t*>(a.in[0]), outer, depth, inner, val, y);
        default: return onehot_lines(static_cast<const float*>(a.in[0]), outer, depth, inner, val, y);
    }
}

void run_onehot(const KernelArgs& a) {
    const TensorDesc& id = kern::in_desc(a, 0);
    const OneHotParams p = OneHotParams::of(*a.node);
    const int axis = static_cast<int>(p.axis);
    const int64_t outer = kern::prod(id.dims, 0, axis), inner = kern::prod(id.dims, axis, id.ndim);
    switch (dtype_size(kern::out_desc(a, 0).dtype)) {  // off and on are moved, never computed on
        case 1: return onehot_typed<uint8_t>(a, outer, p.depth, inner);
        case 2: return onehot_typed<uint16_t>(a, outer, p.depth, inner);
        case 4: return onehot_typed<uint32_t>(a, outer, p.depth, inner);
        default: return onehot_typed<uint64_t>(a, outer, p.depth, inner);
    }
}

}  // namespace

const OpDef kArgReduceDef = {"argreduce", validate_argreduce, no_scratch, run_argreduce, nullptr, nullptr};
const OpDef kTopKDef = {"topk", validate_topk, topk_scratch, run_topk, nullptr, nullptr};
const OpDef kCumSumDef = {
    "cumsum", validate_cumulative<CumSumParams>, no_scratch, run_cumulative<CumSumParams>, nullptr, nullptr};
const OpDef kCumProdDef = {
    "cumprod", validate_cumulative<CumProdParams>, no_scratch, run_cumulative<CumProdParams>, nullptr, nullptr};
const OpDef kOneHotDef = {"onehot", validate_onehot, no_scratch, run_onehot, nullptr, nullptr};

}  // namespace accel_emu
