// qgemm_portable.cc - the int8 GEMM in plain C++ (CPUs without AVX2, and aarch64), and the scalar epilogue
// that defines every path's output bytes. Weights are int16 tiles of 4 rows, [Mp/4][Kg][4 rows][4]; the
// kernel keeps a 4 x 16 block of sums and reads each k-group's 16 units (64 bytes) once per tile. The loops have
// constant bounds so the compiler vectorizes them (a 4-way deinterleave of the units, widening
// multiplies); the sums are uint32 so that a wrapping depth is defined.
#include <algorithm>
#include <cstring>

#include "math/exact_rounding.h"
#include "math/qgemm_impl.h"

#if defined(__GNUC__) && !defined(__clang__)
// gcc fuses a*b + c into an FMA wherever the target has one (-ffp-contract=fast is its default), which
// would change the Float output's last bit; clang only fuses within one expression, which this code avoids.
#define ACCEL_NO_FMA __attribute__((optimize("fp-contract=off")))
#else
#define ACCEL_NO_FMA
#endif

namespace accel_emu {
namespace qk {

namespace {
constexpr int64_t MR = 4, NR = 16;

// acc = A's 4 rows times units [p, p + 16) of the view.
void tile(const int16_t* __restrict__ A, const View& v, int64_t p, int64_t Kg, uint32_t (*acc)[NR]) {
    for (int64_t i = 0; i < MR; ++i)
        for (int64_t j = 0; j < NR; ++j) acc[i][j] = 0;
    for (int64_t g = 0; g < Kg; ++g) {
        const uint8_t* __restrict__ b = v.base + v.off[g] + 4 * p;
        const int16_t* a = A + g * MR * 4;
        for (int64_t i = 0; i < MR; ++i) {
            const int32_t a0 = a[4 * i], a1 = a[4 * i + 1], a2 = a[4 * i + 2], a3 = a[4 * i + 3];
            for (int64_t j = 0; j < NR; ++j)
                acc[i][j] +=
                    static_cast<uint32_t>(a0 * b[4 * j] + a1 * b[4 * j + 1] + a2 * b[4 * j + 2] + a3 * b[4 * j + 3]);
        }
    }
}

ACCEL_NO_FMA void float_row(const int32_t* acc, int64_t n, float s, float fb, float* y, int64_t stride) {
    for (int64_t j = 0; j < n; ++j) {
        const float p = static_cast<float>(acc[j]) * s;
        y[j * stride] = p + fb;
    }
}

}  // namespace

void epilogue_row(const Header* h, int64_t m, const int32_t* acc, int64_t n, void* dst, int64_t stride) {
    const float s = scale(h)[m];
    switch (h->out) {
        case QOut::Int32: {
            int32_t* y = static_cast<int32_t*>(dst);
            for (int64_t j = 0; j < n; ++j) y[j * stride] = acc[j];
            return;
        }
        case QOut::Float: float_row(acc, n, s, fbias(h)[m], static_cast<float*>(dst), stride); return;
        case QOut::Fixed: {
            uint8_t* y = static_cast<uint8_t*>(dst);
            for (int64_t j = 0; j < n; ++j) y[j * stride] = static_cast<uint8_t>(fixed_value(acc[j], h, m));
            return;
        }
        case QOut::Q8: break;
    }
    const float lo = h->lo, hi = h->hi;
    uint8_t* y = static_cast<uint8_t*>(dst);
    for (int64_t j = 0; j < n; ++j) {
        float f = static_cast<float>(acc[j]) * s;
        f = f > lo ? f : lo;  // a NaN gives lo, as MAXPS(f, lo) does
        f = f < hi ? f : hi;
        // nearbyint for |f| < 2^22: adding 1.5 * 2^23 leaves no fraction bits, so the addition rounds f to
        // an integer in the current mode (to nearest even by default), and the subtraction is exact. It
        // vectorizes; nearbyintf is a libm call per value on baseline x86-64.
        const float r = (f + 12582912.f) - 12582912.f;
        y[j * stride] = static_cast<uint8_t>(static_cast<int32_t>(r) + h->y_zero);  // within the output type
    }
}

void pack_weights_portable(const AView& a, int64_t Mp, int64_t Kg, void* out) {
    int16_t* o = static_cast<int16_t*>(out);
    for (int64_t t = 0; t < Mp / MR; ++t)
        for (int64_t g = 0; g < Kg; ++g)
            for (int64_t i = 0; i < MR; ++i)
                for (int b = 0; b < 4; ++b) *o++ = static_cast<int16_t>(a.at(t * MR + i, g, b));
}

void block_portable(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out) {
    const int16_t* W = static_cast<const int16_t*>(weights(h));
    const int64_t e = qout_bytes(h->out);
    char* y = static_cast<char*>(out.y);
    uint32_t acc[MR][NR];
    int32_t row[NR];
    for (int64_t t = 0; t * MR < h->M; ++t) {
        const int16_t* A = W + t * h->Kg * MR * 4;
        for (int64_t j = 0; j < nc; j += NR) {
            tile(A, b, p0 + j, h->Kg, acc);
            const int64_t n = std::min(NR, nc - j);
            for (int64_t i = 0; i < MR && t * MR + i < h->M; ++i) {
                const int64_t m = t * MR + i;
                for (int64_t u = 0; u < n; ++u)
                    row[u] = static_cast<int32_t>(corrected(acc[i][u], h, m, colsum, j + u));
                if (out.xw) epilogue_row(h, m, row, n, y + (j * out.ldy + m) * e, out.ldy);
                else epilogue_row(h, m, row, n, y + (m * out.ldy + j) * e, 1);
            }
        }
    }
}

}  // namespace qk
}  // namespace accel_emu
