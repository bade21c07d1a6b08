// slice.cc - ops that read parts of their input: slice (FORMAT.md op 19), gather (20), expand (25) and
// gatherelements (60); any dtype, the output's the input's.
#include <cstring>

#include "math/strided_copy.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

using kern::no_scratch;

// The checks the three share: one data input (gather: plus its indices), one output of its dtype.
bool check_data_op(const Graph& g, const Node& n, const char* op, std::string* err) {
    if (!kern::check_common(g, n, err)) return false;
    return kern::same_dtype(*kern::input(g, n, 0), kern::output(g, n, 0), op, "input 0", err);
}

// ---- slice: Y[i0, i1, ...] = X[start0 + i0*step0, start1 + i1*step1, ...]

bool validate_slice(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "slice";
    if (!check_data_op(g, n, op, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (y.ndim != x.ndim) return kern::fail(err, op, cat("output rank ", y.ndim, " differs from input rank ", x.ndim));
    const SliceParams p = SliceParams::of(n);
    for (int i = 0; i < kMaxDims; ++i) {
        const int64_t start = p.starts[i], step = p.steps[i];
        if (i >= x.ndim) {
            if (start != 0 || step != 0)
                return kern::fail(
                    err, op,
                    cat("start/step of axis ", i, " (", start, ", ", step, ") must be 0: the rank is ", x.ndim));
            continue;
        }
        if (step == 0) return kern::fail(err, op, cat("step of axis ", i, " is 0"));
        // Within the axis, so that step * the axis' stride stays within the element count.
        if (step < -x.dims[i] || step > x.dims[i])
            return kern::fail(err, op,
                              cat("step of axis ", i, " is ", step, ", outside -", x.dims[i], "..", x.dims[i]));
        int64_t last = 0;
        if (start < 0 || start >= x.dims[i] || !kern::mul_ok(y.dims[i] - 1, step, &last) ||
            !kern::add_ok(start, last, &last) || last < 0 || last >= x.dims[i])
            return kern::fail(err, op,
                              cat("axis ", i, ": ", y.dims[i], " elements from ", start, " by step ", step,
                                  " leave the input's 0..", x.dims[i] - 1));
    }
    return true;
}

void run_slice(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    int64_t xs[kMaxDims], strides[kMaxDims], origin = 0;
    kern::dense_strides(xd.dims, xd.ndim, xs);
    const SliceParams p = SliceParams::of(*a.node);
    for (int i = 0; i < xd.ndim; ++i) {
        origin += p.starts[i] * xs[i];
        strides[i] = p.steps[i] * xs[i];
    }
    const auto* x = static_cast<const unsigned char*>(a.in[0]);
    kern::strided_copy(x + origin * dtype_size(xd.dtype), strides, kern::out_desc(a, 0), a.out[0], *a.par);
}

// ---- gather: Y = X.dims[:axis] + I.dims + X.dims[axis+1:], blocks of X picked by the indices I.
// Indices are int32 or int64, constant (checked at load when validate sees the data) or computed at run
// time: the kernel bounds every index it reads and stops at the first outside -dim..dim-1, reporting it
// (ops.h: the job fails).

// Indices that are constants are checked at load, against -dim..dim-1 (those computed at run time: see run).
bool check_constant_indices(const Graph& g, const TensorDesc& ind, int64_t dim, int64_t axis, const char* op,
                            std::string* err) {
    using kern::cat;
    if (!kern::constant_known(g, ind)) return true;
    for (int64_t i = 0; i < ind.numel; ++i) {
        const int64_t v = kern::constant_index(g, ind, i);
        if (v < -dim || v >= dim)
            return kern::fail(
                err, op,
                cat("index ", v, " at position ", i, " is outside -", dim, "..", dim - 1, " (axis ", axis, ")"));
    }
    return true;
}

bool validate_gather(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "gather";
    if (!check_data_op(g, n, op, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& ind = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const int64_t axis = GatherParams::of(n).axis;
    if (x.ndim < 1) return kern::fail(err, op, "input 0 is a scalar");
    if (axis < 0 || axis >= x.ndim) return kern::fail(err, op, cat("axis ", axis, " outside 0..", x.ndim - 1));
    if (ind.dtype != ACCEL_DTYPE_INT64 && ind.dtype != ACCEL_DTYPE_INT32)
        return kern::fail(err, op, cat("indices dtype ", dtype_name(ind.dtype), " is not int32 or int64"));
    const int rank = x.ndim - 1 + ind.ndim;
    bool ok = y.ndim == rank;
    for (int i = 0; ok && i < rank; ++i) {
        const int64_t want = i < axis ? x.dims[i] : i < axis + ind.ndim ? ind.dims[i - axis] : x.dims[i - ind.ndim + 1];
        ok = y.dims[i] == want;
    }
    if (!ok)
        return kern::fail(err, op,
                          cat("output shape ", kern::dims_str(y), " is not input ", kern::dims_str(x), " with axis ",
                              axis, " replaced by the indices' shape ", kern::dims_str(ind)));
    return check_constant_indices(g, ind, x.dims[axis], axis, op, err);
}

// The index as a position 0..dim-1 (negative ones count from the end), or -1 if outside -dim..dim-1.
template <class I>
inline int64_t gather_position(I v, int64_t dim) {
    const int64_t i = v < 0 ? static_cast<int64_t>(v) + dim : static_cast<int64_t>(v);
    return static_cast<uint64_t>(i) < static_cast<uint64_t>(dim) ? i : -1;
}

// Each index is bounded as it is read (the caller's buffer could change under a check made before), so a
// copy loop ends at the first index outside: returns its position in I (its value in *bad), or -1 when
// every one was inside.
template <class T, class I>
int64_t gather_elements(const T* x, const I* idx, int64_t count, int64_t dim, int64_t outer, T* y, int64_t* bad) {
    for (int64_t o = 0; o < outer; ++o, x += dim)
        for (int64_t k = 0; k < count; ++k) {
            const I v = idx[k];
            const int64_t i = gather_position(v, dim);
            if (i < 0) return *bad = v, k;
            *y++ = x[i];
        }
    return -1;
}

template <class I>
int64_t gather_rows(const KernelArgs& a, const I* idx, int64_t count, int64_t dim, int64_t outer, size_t block,
                    int64_t* bad) {
    const auto* x = static_cast<const unsigned char*>(a.in[0]);
    auto* y = static_cast<unsigned char*>(a.out[0]);
    switch (block) {  // one element per index: typed moves beat a memcpy call per element
        case 1: return gather_elements(x, idx, count, dim, outer, y, bad);
        case 2:
            return gather_elements(static_cast<const uint16_t*>(a.in[0]), idx, count, dim, outer,
                                   static_cast<uint16_t*>(a.out[0]), bad);
        case 4:
            return gather_elements(static_cast<const uint32_t*>(a.in[0]), idx, count, dim, outer,
                                   static_cast<uint32_t*>(a.out[0]), bad);
        case 8:
            return gather_elements(static_cast<const uint64_t*>(a.in[0]), idx, count, dim, outer,
                                   static_cast<uint64_t*>(a.out[0]), bad);
        default: break;
    }
    for (int64_t o = 0; o < outer; ++o, x += dim * block)
        for (int64_t k = 0; k < count; ++k, y += block) {
            const I v = idx[k];
            const int64_t i = gather_position(v, dim);
            if (i < 0) return *bad = v, k;
            std::memcpy(y, x + i * block, block);
        }
    return -1;
}

// The job fails after this node (ops.h): index `value` at position k of input 1, outside axis `axis` of input 0
// (dim elements). Y is left part written.
void report_index(const KernelArgs& a, int64_t k, int64_t value, int64_t dim, int axis) {
    DataFault f;
    f.what = "index";
    f.input = 1;
    f.position = k;
    f.value = value;
    f.lo = -dim;
    f.hi = dim - 1;
    f.range_input = 0;
    f.range_axis = axis;
    a.report(f);
}

template <class I>
void gather_blocks(const KernelArgs& a, const I* idx) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const int axis = static_cast<int>(GatherParams::of(*a.node).axis);
    const int64_t dim = xd.dims[axis];
    const size_t block = kern::prod(xd.dims, axis + 1, xd.ndim) * dtype_size(xd.dtype);  // bytes
    int64_t value = 0;
    const int64_t k = gather_rows(a, idx, kern::in_desc(a, 1).numel, dim, kern::prod(xd.dims, 0, axis), block, &value);
    if (k >= 0) report_index(a, k, value, dim, axis);
}

void run_gather(const KernelArgs& a) {
    if (kern::in_desc(a, 1).dtype == ACCEL_DTYPE_INT32) gather_blocks(a, static_cast<const int32_t*>(a.in[1]));
    else gather_blocks(a, static_cast<const int64_t*>(a.in[1]));
}

// ---- gatherelements: Y[j] = X[j with its axis coordinate replaced by I[j]], Y shaped as I. Indices as gather's.

bool validate_gather_elements(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "gatherelements";
    if (!check_data_op(g, n, op, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& ind = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const int64_t axis = GatherElementsParams::of(n).axis;
    if (x.ndim < 1) return kern::fail(err, op, "input 0 is a scalar");
    if (axis < 0 || axis >= x.ndim) return kern::fail(err, op, cat("axis ", axis, " outside 0..", x.ndim - 1));
    if (ind.dtype != ACCEL_DTYPE_INT64 && ind.dtype != ACCEL_DTYPE_INT32)
        return kern::fail(err, op, cat("indices dtype ", dtype_name(ind.dtype), " is not int32 or int64"));
    bool ok = ind.ndim == x.ndim;
    for (int i = 0; ok && i < x.ndim; ++i) ok = i == axis || ind.dims[i] <= x.dims[i];
    if (!ok)
        return kern::fail(err, op,
                          cat("indices shape ", kern::dims_str(ind), " is not of input ", kern::dims_str(x),
                              "'s rank with every dim but axis ", axis, "'s at most its"));
    if (!kern::check_same_shape(ind, y, op, err)) return false;
    return check_constant_indices(g, ind, x.dims[axis], axis, op, err);
}

// Returns the position in I of the first index outside -dim..dim-1 (its value in *bad), or -1. Each index is
// bounded as it is read, as gather's.
template <class T, class I>
int64_t gather_elements_along(const T* x, const I* idx, const TensorDesc& id, const TensorDesc& xd, int axis, T* y,
                              int64_t* bad) {
    int64_t xs[kMaxDims], pos[kMaxDims] = {0};
    xs[xd.ndim - 1] = 1;
    for (int i = xd.ndim - 1; i > 0; --i) xs[i - 1] = xs[i] * xd.dims[i];
    const int64_t dim = xd.dims[axis];
    int64_t base = 0;  // the offset in X of pos with its axis coordinate 0
    for (int64_t k = 0; k < id.numel; ++k) {
        const int64_t i = gather_position(idx[k], dim);
        if (i < 0) return *bad = idx[k], k;
        y[k] = x[base + i * xs[axis]];
        for (int d = id.ndim - 1; d >= 0; --d) {  // the next position of I, in C order
            if (d != axis) base += xs[d];
            if (++pos[d] < id.dims[d]) break;
            if (d != axis) base -= pos[d] * xs[d];
            pos[d] = 0;
        }
    }
    return -1;
}

template <class I>
void gather_elements_typed(const KernelArgs& a, const I* idx) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& id = kern::in_desc(a, 1);
    const int axis = static_cast<int>(GatherElementsParams::of(*a.node).axis);
    int64_t value = 0, k = -1;
    switch (dtype_size(xd.dtype)) {  // elements moved by their size: the dtype's meaning plays no part
        case 1:
            k = gather_elements_along(static_cast<const uint8_t*>(a.in[0]), idx, id, xd, axis,
                                      static_cast<uint8_t*>(a.out[0]), &value);
            break;
        case 2:
            k = gather_elements_along(static_cast<const uint16_t*>(a.in[0]), idx, id, xd, axis,
                                      static_cast<uint16_t*>(a.out[0]), &value);
            break;
        case 4:
            k = gather_elements_along(static_cast<const uint32_t*>(a.in[0]), idx, id, xd, axis,
                                      static_cast<uint32_t*>(a.out[0]), &value);
            break;
        default:
            k = gather_elements_along(static_cast<const uint64_t*>(a.in[0]), idx, id, xd, axis,
                                      static_cast<uint64_t*>(a.out[0]), &value);
            break;
    }
    if (k >= 0) report_index(a, k, value, xd.dims[axis], axis);
}

void run_gather_elements(const KernelArgs& a) {
    if (kern::in_desc(a, 1).dtype == ACCEL_DTYPE_INT32) gather_elements_typed(a, static_cast<const int32_t*>(a.in[1]));
    else gather_elements_typed(a, static_cast<const int64_t*>(a.in[1]));
}

// ---- expand: Y is X broadcast (numpy rules) to Y's shape

bool validate_expand(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "expand";
    if (!check_data_op(g, n, op, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    const int lead = y.ndim - x.ndim;
    bool ok = lead >= 0;
    for (int i = 0; ok && i < x.ndim; ++i) ok = x.dims[i] == 1 || x.dims[i] == y.dims[lead + i];
    if (!ok)
        return kern::fail(err, op,
                          cat("input ", kern::dims_str(x), " does not broadcast to output ", kern::dims_str(y)));
    return true;
}

void run_expand(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    int64_t xs[kMaxDims], strides[kMaxDims];
    kern::dense_strides(xd.dims, xd.ndim, xs);
    const int lead = yd.ndim - xd.ndim;  // X is right-aligned to Y
    for (int i = 0; i < yd.ndim; ++i) {
        const int j = i - lead;
        strides[i] = j < 0 || xd.dims[j] == 1 ? 0 : xs[j];
    }
    kern::strided_copy(a.in[0], strides, yd, a.out[0], *a.par);
}

}  // namespace

const OpDef kSliceDef = {"slice", validate_slice, no_scratch, run_slice, nullptr, nullptr};
const OpDef kGatherDef = {"gather", validate_gather, no_scratch, run_gather, nullptr, nullptr};
const OpDef kExpandDef = {"expand", validate_expand, no_scratch, run_expand, nullptr, nullptr};
const OpDef kGatherElementsDef = {"gatherelements", validate_gather_elements, no_scratch, run_gather_elements, nullptr,
                                  nullptr};

}  // namespace accel_emu
