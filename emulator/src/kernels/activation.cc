// activation.cc - the fused activations of FORMAT.md, the activation op (op 8: the node's activation
// field is the function), and the conv epilogue (bias + activation over rows of a GEMM result while
// they are still in cache).
#include <cstddef>
#include <cstdint>

#include "fast_math.h"
#include "kernel_util.h"
#include "op_defs.h"

namespace accel_emu {

namespace {

struct Identity {
    ACCEL_INLINE float operator()(float x) const { return x; }
};
struct Relu {
    ACCEL_INLINE float operator()(float x) const { return x > 0.f ? x : 0.f; }
};
struct Clip {  // min(max(x, lo), hi), in that order (hi wins when lo > hi, as in ONNX)
    float lo, hi;
    ACCEL_INLINE float operator()(float x) const {
        float t = x < lo ? lo : x;
        return t > hi ? hi : t;
    }
};
struct Sigmoid {
    ACCEL_INLINE float operator()(float x) const { return 1.f / (1.f + kern::exp_approx(-x)); }
};
struct HardSigmoid {
    float a, b;
    ACCEL_INLINE float operator()(float x) const {
        float t = a * x + b;
        t = t < 0.f ? 0.f : t;
        return t > 1.f ? 1.f : t;
    }
};
struct HardSwish {
    ACCEL_INLINE float operator()(float x) const {
        float t = x * (1.f / 6.f) + 0.5f;
        t = t < 0.f ? 0.f : t;
        return x * (t > 1.f ? 1.f : t);
    }
};
struct LeakyRelu {
    float a;
    ACCEL_INLINE float operator()(float x) const { return x >= 0.f ? x : a * x; }
};

// y[i] = f(x[i] + bias); x may equal y (in place) but must not otherwise overlap it.
template <class F>
__attribute__((always_inline)) inline void map(const float* x, float* y, size_t n, float bias, F f) {
    for (size_t i = 0; i < n; ++i) y[i] = f(x[i] + bias);
}

// One switch per call, the loop inside each case, so every loop is a plain vectorizable map.
ACCEL_HOT void act_map(Act act, float a, float b, const float* x, float* y, size_t n, float bias) {
    switch (act) {
        case Act::None: map(x, y, n, bias, Identity{}); break;
        case Act::Relu: map(x, y, n, bias, Relu{}); break;
        case Act::Clip: map(x, y, n, bias, Clip{a, b}); break;
        case Act::Sigmoid: map(x, y, n, bias, Sigmoid{}); break;
        case Act::HardSigmoid: map(x, y, n, bias, HardSigmoid{a, b}); break;
        case Act::HardSwish: map(x, y, n, bias, HardSwish{}); break;
        case Act::LeakyRelu: map(x, y, n, bias, LeakyRelu{a}); break;
    }
}

bool validate_act(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "activation";
    if (!kern::check_common(g, n, op, {1, 1, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::Function, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dims(x, y))
        return kern::fail(err, op, cat("output shape ", kern::dims_str(y), " differs from input ", kern::dims_str(x)));
    return true;
}

size_t no_scratch(const Graph&, const Node&) { return 0; }

void run_act(const KernelArgs& a) {
    const Node& n = *a.node;
    act_map(n.act, n.act_alpha, n.act_beta, kern::in_f(a, 0), kern::out_f(a, 0),
            static_cast<size_t>(kern::out_desc(a, 0).numel), 0.f);
}

}  // namespace

const OpDef kActivationDef = {"activation", validate_act, no_scratch, run_act, nullptr, nullptr};

bool valid_activation(uint32_t act) { return act <= static_cast<uint32_t>(Act::LeakyRelu); }

void apply_activation(Act act, float alpha, float beta, float* data, size_t n) {
    if (act == Act::None || n == 0 || data == nullptr || !valid_activation(static_cast<uint32_t>(act))) return;
    act_map(act, alpha, beta, data, data, n, 0.f);
}

namespace kern {

void bias_act_rows(float* y, int64_t rows, int64_t cols, int64_t ld, const float* bias, Act act, float alpha,
                   float beta) {
    if (act == Act::None && bias == nullptr) return;
    for (int64_t r = 0; r < rows; ++r) {
        float* row = y + r * ld;
        act_map(act, alpha, beta, row, row, static_cast<size_t>(cols), bias ? bias[r] : 0.f);
    }
}

}  // namespace kern
}  // namespace accel_emu
