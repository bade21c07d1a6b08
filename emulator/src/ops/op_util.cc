// op_util.cc - the checks every op's validate shares, and conv/pool window geometry.
#include "ops/op_util.h"

#include "math/broadcast.h"

namespace accel_emu {
namespace kern {

std::string dims_str(const TensorDesc& t) {
    std::string s = "[";
    for (int i = 0; i < t.ndim && i < kMaxDims; ++i) {
        if (i) s += ",";
        s += std::to_string(t.dims[i]);
    }
    return s + "]";
}

// The reader has checked these, but a kernel's memory safety rests on them, so they are cheap to
// re-check here rather than trust across module boundaries.
static bool check_desc(const TensorDesc& t, const char* op, const char* role, size_t i, std::string* err) {
    if (t.ndim < 0 || t.ndim > kMaxDims)
        return fail(err, op, cat(role, " ", i, " rank ", t.ndim, " outside 0..", kMaxDims));
    int64_t n = 1;
    for (int d = 0; d < t.ndim; ++d) {
        if (t.dims[d] < 1) return fail(err, op, cat(role, " ", i, " dim ", d, " is ", t.dims[d], " (must be >= 1)"));
        if (!mul_ok(n, t.dims[d], &n)) return fail(err, op, cat(role, " ", i, " element count overflows"));
    }
    if (n != t.numel)
        return fail(err, op, cat(role, " ", i, " element count ", t.numel, " does not match its shape ", dims_str(t)));
    int64_t bytes = 0;
    size_t es = dtype_size(t.dtype);
    if (es == 0) return fail(err, op, cat(role, " ", i, " has unknown dtype ", t.dtype));
    if (!mul_ok(n, static_cast<int64_t>(es), &bytes) || static_cast<uint64_t>(bytes) != t.bytes)
        return fail(err, op, cat(role, " ", i, " byte size ", t.bytes, " does not match ", dims_str(t)));
    return true;
}

namespace {

// check_common's arity: inputs min_in..max_in (SIZE_MAX: any number), outputs min_out..max_out.
struct Counts { size_t min_in, max_in, required_in, min_out, max_out; };

bool check_counts(const Graph& g, const Node& n, const char* op, const Counts& ar, DTypeRule dt, ActRule act,
                  std::string* err) {
    const size_t nin = n.inputs.size();
    if (nin < ar.min_in || nin > ar.max_in) {
        if (ar.min_in == ar.max_in) return fail(err, op, cat("expects ", ar.min_in, " inputs, got ", nin));
        if (ar.max_in == SIZE_MAX) return fail(err, op, cat("expects at least ", ar.min_in, " inputs, got ", nin));
        return fail(err, op, cat("expects ", ar.min_in, " to ", ar.max_in, " inputs, got ", nin));
    }
    const size_t nout = n.outputs.size();
    if (nout < ar.min_out || nout > ar.max_out) {
        if (ar.min_out == ar.max_out) return fail(err, op, cat("expects ", ar.min_out, " outputs, got ", nout));
        return fail(err, op, cat("expects ", ar.min_out, " to ", ar.max_out, " outputs, got ", nout));
    }
    const size_t nt = g.tensors.size();
    for (size_t i = 0; i < nin; ++i) {
        uint32_t t = n.inputs[i];
        if (t == kAbsent) {
            if (i < ar.required_in) return fail(err, op, cat("required input ", i, " is absent"));
            continue;
        }
        if (t >= nt) return fail(err, op, cat("input ", i, " tensor index ", t, " out of range"));
        if (!check_desc(g.tensors[t], op, "input", i, err)) return false;
        if (dt == DTypeRule::Float32 && g.tensors[t].dtype != ACCEL_DTYPE_FLOAT32)
            return fail(err, op, cat("input ", i, " dtype ", g.tensors[t].dtype, " is not float32"));
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
        uint32_t t = n.outputs[i];
        if (t == kAbsent || t >= nt) return fail(err, op, cat("output ", i, " tensor index ", t, " invalid"));
        if (!check_desc(g.tensors[t], op, "output", i, err)) return false;
        if (dt == DTypeRule::Float32 && g.tensors[t].dtype != ACCEL_DTYPE_FLOAT32)
            return fail(err, op, cat("output ", i, " dtype ", g.tensors[t].dtype, " is not float32"));
        // Kernels assume outputs do not alias their inputs.
        for (size_t j = 0; j < nin; ++j)
            if (n.inputs[j] == t) return fail(err, op, cat("output ", i, " is also input ", j));
    }
    const uint32_t a = static_cast<uint32_t>(n.act);
    switch (act) {
        case ActRule::MustBeNone:
            if (n.act != Act::None) return fail(err, op, cat("fused activation ", a, " not supported"));
            break;
        case ActRule::Fused:
        case ActRule::Device:  // the op's own check narrows it to its rule set's (check_device_act)
            if (!valid_activation(a)) return fail(err, op, cat("unknown activation code ", a));
            break;
        case ActRule::Function:
            if (!valid_activation(a)) return fail(err, op, cat("unknown activation code ", a));
            if (n.act == Act::None) return fail(err, op, "activation code 0 (none) is not a function");
            break;
    }
    return true;
}

}  // namespace

bool check_common(const Graph& g, const Node& n, DTypeRule dt, std::string* err) {
    const OpContract c = op_contract(n.op);
    if (c.name == nullptr) return fail(err, "op", cat("code ", static_cast<uint32_t>(n.op), " has no contract"));
    const size_t max_in = c.max_in == kVariadic ? SIZE_MAX : c.max_in;
    return check_counts(g, n, c.name, {c.min_in, max_in, c.required_in, c.min_out, c.max_out}, dt, c.act, err);
}

bool check_common(const Graph& g, const Node& n, std::string* err) {
    return check_common(g, n, op_contract(n.op).dtypes, err);
}

bool check_common(const Graph& g, const Node& n, const char* op, const Arity& ar, DTypeRule dt, ActRule act,
                  std::string* err) {
    // The op's check may narrow its contract, never widen it: the schema is what the compiler writes to.
    const OpContract c = op_contract(n.op);
    const size_t max_in = c.max_in == kVariadic ? SIZE_MAX : c.max_in;
    const bool act_ok = act == c.act || (c.act == ActRule::Device && act != ActRule::Function);
    if (c.name == nullptr || ar.min_in < c.min_in || ar.max_in > max_in || ar.required_in < c.required_in ||
        ar.outputs < c.min_out || ar.outputs > c.max_out || !act_ok)
        return fail(err, op, "internal error: the op's check is looser than its contract in emulator/op_schema.py");
    return check_counts(g, n, op, {ar.min_in, ar.max_in, ar.required_in, ar.outputs, ar.outputs}, dt, act, err);
}

bool same_dtype(const TensorDesc& x, const TensorDesc& y, const char* op, const char* what, std::string* err) {
    if (x.dtype == y.dtype) return true;
    return fail(err, op, cat(what, " dtype ", dtype_name(x.dtype), " differs from output dtype ", dtype_name(y.dtype)));
}

bool check_same_shape(const TensorDesc& x, const TensorDesc& y, const char* op, std::string* err) {
    if (same_dims(x, y)) return true;
    return fail(err, op, cat("output shape ", dims_str(y), " differs from input ", dims_str(x)));
}

bool check_broadcast(const TensorDesc& a, const TensorDesc& b, const TensorDesc& y, const char* op, std::string* err) {
    const int r = a.ndim > b.ndim ? a.ndim : b.ndim;
    if (y.ndim != r)
        return fail(err, op, cat("output rank ", y.ndim, " is not ", r, " (A ", dims_str(a), ", B ", dims_str(b), ")"));
    for (int i = 0; i < r; ++i) {
        const int64_t da = broadcast_dim(a, r, i), db = broadcast_dim(b, r, i);
        if (da != db && da != 1 && db != 1)
            return fail(err, op,
                        cat("shapes ", dims_str(a), " and ", dims_str(b), " do not broadcast (dim ", i, ": ", da,
                            " vs ", db, ")"));
        if (y.dims[i] != (da > db ? da : db))
            return fail(
                err, op,
                cat("output shape ", dims_str(y), " is not the broadcast of ", dims_str(a), " and ", dims_str(b)));
    }
    return true;
}

bool window_axis(Axis* ax, bool ceil, const char* op, const char* nm, std::string* err) {
    if (ax->k < 1) return fail(err, op, cat("kernel_", nm, " ", ax->k, " must be >= 1"));
    if (ax->stride < 1) return fail(err, op, cat("stride_", nm, " ", ax->stride, " must be >= 1"));
    if (ax->dil < 1) return fail(err, op, cat("dilation_", nm, " ", ax->dil, " must be >= 1"));
    if (ax->pad_lo < 0 || ax->pad_hi < 0)
        return fail(err, op, cat("pads along ", nm, " (", ax->pad_lo, ", ", ax->pad_hi, ") must be >= 0"));
    int64_t ext = 0, padded = 0;
    if (!mul_ok(ax->dil, ax->k - 1, &ext) || !add_ok(ext, 1, &ext) || !add_ok(ax->in, ax->pad_lo, &padded) ||
        !add_ok(padded, ax->pad_hi, &padded))
        return fail(err, op, cat("window parameters along ", nm, " overflow"));
    // Kernels compute window ends up to padded + extent and padded + stride: keep those in range.
    int64_t t = 0;
    if (!add_ok(padded, ext, &t) || !add_ok(padded, ax->stride, &t))
        return fail(err, op, cat("window parameters along ", nm, " overflow"));
    const int64_t num = padded - ext;  // both non-negative, cannot overflow
    int64_t out;
    if (!ceil) {
        if (num < 0) return fail(err, op, cat("kernel extent ", ext, " exceeds padded input ", padded, " along ", nm));
        out = num / ax->stride + 1;
    } else {
        out = (num >= 0 ? num / ax->stride + (num % ax->stride != 0) : -((-num) / ax->stride)) + 1;
        // ONNX: the last window must start inside the input or its leading padding.
        int64_t last_start = 0;
        if (out >= 1 && (!mul_ok(out - 1, ax->stride, &last_start) || last_start >= ax->in + ax->pad_lo)) --out;
        if (out < 1) return fail(err, op, cat("kernel extent ", ext, " exceeds padded input ", padded, " along ", nm));
    }
    ax->out = out;
    return true;
}

}  // namespace kern
}  // namespace accel_emu
