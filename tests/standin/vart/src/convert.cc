// convert.cc - see convert.h.
#include "convert.h"

#include <cmath>
#include <cstring>

#include "fatal.h"

namespace standin_vart {
namespace {

// Element n (C order) of an NHWC tensor is element nchw_index(n) of its NCHW counterpart.
struct Transpose {
    bool on = false;
    int64_t h = 1, w = 1, c = 1;
    int64_t operator()(int64_t n) const {
        if (!on) return n;
        int64_t ci = n % c, rest = n / c;
        int64_t wi = rest % w;
        rest /= w;
        int64_t hi = rest % h, ni = rest / h;
        return ((ni * c + ci) * h + hi) * w + wi;
    }
};

Transpose transpose_of(const DpuTensor& t) {
    Transpose tr;
    const std::vector<std::int32_t> s = t.tensor->get_shape();
    if (t.nchw && s.size() == 4) {
        tr.on = true;
        tr.h = s[1];
        tr.w = s[2];
        tr.c = s[3];
    }
    return tr;
}

float real(const DpuTensor& t, std::uint8_t byte) {
    int q = t.kind == DpuTensor::XINT8 ? (int)(std::int8_t)byte : (int)byte;
    return std::ldexp((float)q, -t.fix_point);
}

// A float32 tensor's elements, transposed if need be; memcpy: the user's bytes need not be float-aligned.
void copy_floats(const Transpose& tr, int64_t n, const std::uint8_t* src, bool to_emulator, std::uint8_t* dst) {
    if (!tr.on) return (void)std::memcpy(dst, src, (size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        const int64_t from = to_emulator ? i : tr(i), to = to_emulator ? tr(i) : i;
        std::memcpy(dst + to * sizeof(float), src + from * sizeof(float), sizeof(float));
    }
}

}  // namespace

DpuTensor dpu_view(const xir::Tensor* tensor) {
    const xir::DataType& dt = tensor->get_data_type();
    DpuTensor f{tensor, DpuTensor::FLOAT32, 0, false};
    if (dt == xir::DataType(xir::DataType::XINT, 8)) f.kind = DpuTensor::XINT8;
    else if (dt == xir::DataType(xir::DataType::XUINT, 8)) f.kind = DpuTensor::XUINT8;
    else if (dt != xir::DataType(xir::DataType::FLOAT, 32))
        fatal("DPU tensor %s is %s; the stand-in's DPU runs xint8, xuint8 and float32 tensors",
              tensor->get_name().c_str(), dt.to_string().c_str());
    if (f.kind != DpuTensor::FLOAT32) {
        if (!tensor->has_attr("fix_point")) fatal("DPU tensor %s has no fix_point", tensor->get_name().c_str());
        f.fix_point = tensor->get_attr<int>("fix_point");
    }
    f.nchw = tensor->has_attr("standin_nchw") && tensor->get_attr<int>("standin_nchw") != 0;
    return f;
}

void to_float(const DpuTensor& t, const std::uint8_t* q, float* out) {
    const Transpose tr = transpose_of(t);
    const int64_t n = t.tensor->get_element_num();
    if (t.kind == DpuTensor::FLOAT32) return copy_floats(tr, n, q, true, reinterpret_cast<std::uint8_t*>(out));
    for (int64_t i = 0; i < n; i++) out[tr(i)] = real(t, q[i]);
}

void from_float(const DpuTensor& t, const float* v, std::uint8_t* q) {
    const Transpose tr = transpose_of(t);
    const int64_t n = t.tensor->get_element_num();
    if (t.kind == DpuTensor::FLOAT32) return copy_floats(tr, n, reinterpret_cast<const std::uint8_t*>(v), false, q);
    const bool is_signed = t.kind == DpuTensor::XINT8;
    const double lo = is_signed ? -128.0 : 0.0, hi = is_signed ? 127.0 : 255.0;
    for (int64_t i = 0; i < n; i++) {
        double r = std::nearbyint(std::ldexp((double)v[tr(i)], t.fix_point));
        if (std::isnan(r)) r = 0;
        r = r < lo ? lo : (r > hi ? hi : r);
        q[i] = is_signed ? (std::uint8_t)(std::int8_t)r : (std::uint8_t)r;
    }
}

void float_to_xint_truncating(const DpuTensor& t, const float* x, std::uint8_t* q) {
    const int64_t n = t.tensor->get_element_num();
    for (int64_t i = 0; i < n; i++) {
        double r = std::trunc(std::ldexp((double)x[i], t.fix_point));
        // Wraps like the int8 cast of the vendor's samples; NaN and huge values (undefined in C++) as 0.
        long long whole = std::isfinite(r) && std::fabs(r) < 9e18 ? (long long)r : 0;
        q[i] = (std::uint8_t)(whole & 0xff);
    }
}

void xint_to_float(const DpuTensor& t, const std::uint8_t* q, float* x) {
    const int64_t n = t.tensor->get_element_num();
    for (int64_t i = 0; i < n; i++) x[i] = real(t, q[i]);
}

}  // namespace standin_vart
