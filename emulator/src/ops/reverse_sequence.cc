// reverse_sequence.cc - ONNX ReverseSequence (FORMAT.md op 76, minor 6): per batch, the first L[b] steps along
// the time axis reversed, any dtype (elements moved by their size). The lengths may come at run time: all are
// checked before anything is written, and the first outside 0..T is reported (ops.h: the job fails naming it,
// as onnxruntime fails the run).
#include <cstring>

#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

using kern::cat;

using kern::no_scratch;

bool validate_reversesequence(const Graph& g, const Node& n, std::string* err) {
    const char* op = "reversesequence";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& l = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dtype(x, y, op, "input 0", err) || !kern::check_same_shape(x, y, op, err)) return false;
    const ReverseSequenceParams p = ReverseSequenceParams::of(n);
    if (x.ndim < 2) return kern::fail(err, op, cat("input 0 has rank ", x.ndim, ", not >= 2"));
    if (!((p.batch_axis == 0 && p.time_axis == 1) || (p.batch_axis == 1 && p.time_axis == 0)))
        return kern::fail(err, op,
                          cat("batch_axis ", p.batch_axis, " and time_axis ", p.time_axis, " are not 0 and 1"));
    if (l.dtype != ACCEL_DTYPE_INT64 || l.ndim != 1 || l.dims[0] != x.dims[p.batch_axis])
        return kern::fail(err, op,
                          cat("sequence lengths ", kern::dims_str(l), " ", dtype_name(l.dtype), " are not int64 [",
                              x.dims[p.batch_axis], "]"));
    if (kern::constant_known(g, l)) {
        for (int64_t b = 0; b < l.numel; ++b) {
            const int64_t v = kern::constant_index(g, l, b);
            if (v < 0 || v > x.dims[p.time_axis])
                return kern::fail(
                    err, op, cat("sequence length ", v, " at position ", b, " is outside 0..", x.dims[p.time_axis]));
        }
    }
    return true;
}

void run_reversesequence(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const ReverseSequenceParams p = ReverseSequenceParams::of(*a.node);
    const int64_t* len = static_cast<const int64_t*>(a.in[1]);
    const int64_t batches = xd.dims[p.batch_axis], steps = xd.dims[p.time_axis];
    for (int64_t b = 0; b < batches; ++b)
        if (len[b] < 0 || len[b] > steps) {
            DataFault f;
            f.what = "sequence length";
            f.input = 1;
            f.position = b;
            f.value = len[b];
            f.lo = 0;
            f.hi = steps;
            f.range_input = 0;
            f.range_axis = static_cast<int32_t>(p.time_axis);
            return a.report(f);
        }
    // X as [d0, d1, inner]: (batch, time) or (time, batch) blocks of `inner` elements.
    const size_t block = static_cast<size_t>(kern::prod(xd.dims, 2, xd.ndim)) * dtype_size(xd.dtype);
    const int64_t d1 = xd.dims[1];
    const auto* x = static_cast<const unsigned char*>(a.in[0]);
    auto* y = static_cast<unsigned char*>(a.out[0]);
    for (int64_t i0 = 0; i0 < xd.dims[0]; ++i0)
        for (int64_t i1 = 0; i1 < d1; ++i1) {
            const int64_t b = p.batch_axis == 0 ? i0 : i1, t = p.batch_axis == 0 ? i1 : i0;
            const int64_t src_t = t < len[b] ? len[b] - 1 - t : t;
            const int64_t src = p.batch_axis == 0 ? b * d1 + src_t : src_t * d1 + b;
            std::memcpy(y + (i0 * d1 + i1) * block, x + src * block, block);
        }
}

}  // namespace

const OpDef kReverseSequenceDef = {
    "reversesequence", validate_reversesequence, no_scratch, run_reversesequence, nullptr, nullptr};

}  // namespace accel_emu
