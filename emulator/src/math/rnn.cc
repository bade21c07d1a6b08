// rnn.cc - see rnn.h. The gate order is ONNX's: GRU z, r, h; LSTM i, o, f, c (peepholes i, o, f). A batch
// row whose length has run out keeps its state and gets zeros in Y; the arithmetic per element is fixed
// (no threads), so results are deterministic.
#include "math/rnn.h"

#include <algorithm>
#include <cstring>

#include <cmath>

#include "math/activation.h"
#include "math/exact_rounding.h"
#include "math/gemm.h"
#include "math/quantize.h"

namespace accel_emu {
namespace {

struct Dir {
    const RnnSpec& s;
    int d;        // direction index
    int G;
    int64_t GH;
    const float* B;  // Wb then Rb, or nullptr
    const float* P;  // i, o, f, or nullptr

    // x[j] = (x[j] + proj[j]) (+ peep[j] * c[j]) + (Wb[k,j] + Rb[k,j]) for gate k, the order onnxruntime adds
    // them in (the GRU h gate of linear_before_reset: Wb only).
    void add_input(float* x, const float* proj, int k, bool w_bias_only = false, const float* peep = nullptr,
                   const float* c = nullptr) const {
        const int64_t H = s.H;
        for (int64_t j = 0; j < H; ++j) x[j] += proj[j];
        if (peep)
            for (int64_t j = 0; j < H; ++j) x[j] += peep[j] * c[j];
        if (!B) return;
        const float* wb = B + k * H;
        const float* rb = B + GH + k * H;
        if (w_bias_only) {
            for (int64_t j = 0; j < H; ++j) x[j] += wb[j];
        } else {
            for (int64_t j = 0; j < H; ++j) x[j] += wb[j] + rb[j];
        }
    }
    // Clip (NaN kept) and activation `which` (0 f, 1 g, 2 h) in place.
    void activate(float* x, int which) const {
        const int64_t H = s.H;
        if (s.clip > 0.f) {
            const float c = s.clip;
            for (int64_t j = 0; j < H; ++j) {
                if (x[j] > c) x[j] = c;
                else if (x[j] < -c) x[j] = -c;
            }
        }
        activation_map(s.act[d][which], s.alpha[d][which], s.beta[d][which], x, x, static_cast<size_t>(H));
    }
};

// c[m*ldc + n] = float(sum_k (a[m,k] - za) * (w[k,n] - zw)) * mult[n] for m < M, n < N: the int32 sums of
// onnxruntime's quantized GEMM (exact modulo 2^32, as int32 wraps in its kernels) and its float32 scaling,
// with A [M,K] (float) quantized dynamically over the rows `use` says (all if null). The int8 GEMM takes
// w packed with A's zero point 0 and writes each sum into c; A's zero point times the row sums of w comes
// off after. q (M*K bytes) and mult (N floats) are scratch, gemm_scratch the GEMM's.
void qgemm_dynamic(int64_t M, int64_t N, int64_t K, const float* A, const bool* use, const void* w,
                   const int32_t* w_sums, const float* w_scale, float* c, int64_t ldc, uint8_t* q, float* mult,
                   void* gemm_scratch) {
    float lo = 0.f, hi = 0.f;  // dynquant's range: [min(A, 0), max(A, 0)] over the rows in use
    for (int64_t m = 0; m < M; ++m)
        if (!use || use[m]) widen_range(A + m * K, K, &lo, &hi);
    float scale;
    uint8_t zero;
    dynamic_qparams_of_range(lo, hi, &scale, &zero);
    const int32_t za = zero;
    quantize_linear(A, 1, 1, M * K, &scale, &za, false, q);
    for (int64_t n = 0; n < N; ++n) mult[n] = scale * w_scale[n];
    qgemm_xw(w, M, q, K, c, ldc, gemm_scratch);
    const uint32_t uz = static_cast<uint32_t>(za);
    for (int64_t m = 0; m < M; ++m) {
        float* cm = c + m * ldc;
        for (int64_t n = 0; n < N; ++n) {
            uint32_t acc;  // the GEMM's int32 sum, where the float result goes
            std::memcpy(&acc, cm + n, sizeof acc);
            cm[n] = static_cast<float>(static_cast<int32_t>(acc - uz * static_cast<uint32_t>(w_sums[n]))) * mult[n];
        }
    }
}

// The op has refused lengths outside 0..S (ops/rnn.cc); the clamp bounds what a changed buffer could hold.
int64_t length_of(const RnnSpec& s, const int32_t* L, int64_t n) {
    if (!L) return s.S;
    const int64_t v = L[n];
    return v < 0 ? 0 : (v > s.S ? s.S : v);
}

}  // namespace

int rnn_gates(RnnCell cell) {
    switch (cell) {
        case RnnCell::Rnn: return 1;
        case RnnCell::Gru: return 3;
        case RnnCell::Lstm: return 4;
    }
    return 1;
}

int64_t rnn_scratch_floats(const RnnSpec& s) {
    const int64_t G = rnn_gates(s.cell);
    const int64_t NH = s.N * s.H;
    int64_t n = s.S * s.N * G * s.H + s.N * G * s.H + NH;  // projection, recurrent product, h
    if (s.cell == RnnCell::Lstm) n += NH;                    // c
    if (s.cell == RnnCell::Gru && !s.linear_before_reset) n += NH;  // r * h
    if (s.quantized) {
        const int64_t q_bytes = std::max(s.S * s.N * s.I, NH);  // the quantized A
        n += (q_bytes + 3) / 4 + G * s.H + (s.N + 3) / 4;         // + mult, the rows in the range
    }
    return n;
}

QGemmSpec rnn_gemm_spec(const RnnSpec& s, bool recurrent) {
    QGemmSpec q;
    q.M = rnn_gates(s.cell) * s.H;
    q.K = recurrent ? s.H : s.I;
    q.w_signed = recurrent ? s.r_signed : s.w_signed;
    q.x_signed = false;  // dynquant's uint8
    q.out = QOut::Int32;
    return q;
}

void rnn_run(const RnnSpec& s, const RnnData& io, float* scratch) {
    const int G = rnn_gates(s.cell);
    const int64_t S = s.S, N = s.N, H = s.H, I = s.I, D = s.D, GH = G * H;
    float* proj = scratch;
    float* gates = proj + S * N * GH;
    float* h = gates + N * GH;
    float* c = h + N * H;
    float* rh = c + (s.cell == RnnCell::Lstm ? N * H : 0);
    float* qbase = rh + (s.cell == RnnCell::Gru && !s.linear_before_reset ? N * H : 0);
    uint8_t* q = reinterpret_cast<uint8_t*>(qbase);
    float* mult = qbase + (std::max(S * N * I, N * H) + 3) / 4;
    bool* use = reinterpret_cast<bool*>(mult + GH);
    if (io.Y) std::fill(io.Y, io.Y + S * D * N * H, 0.f);
    const auto state_at = [&](int64_t d, int64_t n) { return s.batch_first ? (n * D + d) * H : (d * N + n) * H; };
    const auto y_at = [&](int64_t t, int64_t d, int64_t n) {
        return s.batch_first ? ((n * S + t) * D + d) * H : ((t * D + d) * N + n) * H;
    };
    const auto proj_row = [&](int64_t t, int64_t n) { return proj + (s.batch_first ? n * S + t : t * N + n) * GH; };
    int64_t max_len = 0;
    for (int64_t n = 0; n < N; ++n) max_len = std::max(max_len, length_of(s, io.L, n));

    for (int d = 0; d < static_cast<int>(D); ++d) {
        const bool reverse = d == 1 || s.reverse;
        // Float weights (the quantized ones are in io.packed).
        const float* W = s.quantized ? nullptr : static_cast<const float*>(io.W) + d * GH * I;
        const float* R = s.quantized ? nullptr : static_cast<const float*>(io.R) + d * GH * H;
        const Dir dir{s, d, G, GH, io.B ? io.B + d * 2 * GH : nullptr, io.P ? io.P + d * 3 * H : nullptr};
        // X W^T for every step and batch row, in X's row order (quantized: the steps up to the longest
        // length, sequence first, as onnxruntime quantizes them).
        if (s.quantized)
            qgemm_dynamic(max_len * N, GH, I, io.X, nullptr, io.packed.w[d], io.packed.w_sums[d], io.WS + d * GH, proj,
                          GH, q, mult, io.gemm_scratch);
        else
            sgemm(false, true, static_cast<int>(S * N), static_cast<int>(GH), static_cast<int>(I), 1.f, io.X,
                  static_cast<int>(I), static_cast<const float*>(W), static_cast<int>(I), 0.f, proj,
                  static_cast<int>(GH));
        for (int64_t n = 0; n < N; ++n) {
            if (io.H0) std::memcpy(h + n * H, io.H0 + state_at(d, n), H * sizeof(float));
            else std::fill(h + n * H, h + (n + 1) * H, 0.f);
            if (s.cell == RnnCell::Lstm) {
                if (io.C0) std::memcpy(c + n * H, io.C0 + state_at(d, n), H * sizeof(float));
                else std::fill(c + n * H, c + (n + 1) * H, 0.f);
            }
        }
        const bool gru_split = s.cell == RnnCell::Gru && !s.linear_before_reset;
        for (int64_t step = 0; step < max_len; ++step) {
            // H_{t-1} R^T for every row (GRU without linear_before_reset: z and r only, h after the reset).
            if (s.quantized) {
                // onnxruntime reads H_{t-1} from Y when Y is an output, where rows past their length are 0.
                for (int64_t n = 0; n < N; ++n) use[n] = !io.Y || step == 0 || length_of(s, io.L, n) >= step;
                qgemm_dynamic(N, GH, H, h, use, io.packed.r[d], io.packed.r_sums[d], io.RS + d * GH, gates, GH, q, mult,
                              io.gemm_scratch);
            } else {
                sgemm(false, true, static_cast<int>(N), static_cast<int>(gru_split ? 2 * H : GH), static_cast<int>(H),
                      1.f, h, static_cast<int>(H), static_cast<const float*>(R), static_cast<int>(H), 0.f, gates,
                      static_cast<int>(GH));
            }
            if (gru_split) {
                for (int64_t n = 0; n < N; ++n) {
                    const int64_t len = length_of(s, io.L, n);
                    float* g = gates + n * GH;
                    float* r_h = rh + n * H;
                    if (step >= len) {
                        std::fill(r_h, r_h + H, 0.f);
                        continue;
                    }
                    const float* x = proj_row(reverse ? len - 1 - step : step, n);
                    dir.add_input(g, x, 0);
                    dir.activate(g, 0);
                    dir.add_input(g + H, x + H, 1);
                    dir.activate(g + H, 0);
                    const float* hp = h + n * H;
                    for (int64_t j = 0; j < H; ++j) r_h[j] = g[H + j] * hp[j];
                }
                sgemm(false, true, static_cast<int>(N), static_cast<int>(H), static_cast<int>(H), 1.f, rh,
                      static_cast<int>(H), static_cast<const float*>(R) + 2 * H * H, static_cast<int>(H), 0.f,
                      gates + 2 * H, static_cast<int>(GH));
            }
            for (int64_t n = 0; n < N; ++n) {
                const int64_t len = length_of(s, io.L, n);
                if (step >= len) continue;
                const int64_t t = reverse ? len - 1 - step : step;
                const float* x = proj_row(t, n);
                float* g = gates + n * GH;
                float* hp = h + n * H;
                switch (s.cell) {
                    case RnnCell::Rnn:
                        dir.add_input(g, x, 0);
                        dir.activate(g, 0);
                        std::memcpy(hp, g, H * sizeof(float));
                        break;
                    case RnnCell::Gru: {
                        float* z = g;
                        float* r = g + H;
                        float* hh = g + 2 * H;
                        if (!gru_split) {
                            dir.add_input(z, x, 0);
                            dir.activate(z, 0);
                            dir.add_input(r, x + H, 1);
                            dir.activate(r, 0);
                            const float* rb = dir.B ? dir.B + GH + 2 * H : nullptr;
                            for (int64_t j = 0; j < H; ++j) hh[j] = r[j] * (rb ? hh[j] + rb[j] : hh[j]);
                            dir.add_input(hh, x + 2 * H, 2, true);
                        } else {
                            dir.add_input(hh, x + 2 * H, 2);
                        }
                        dir.activate(hh, 1);
                        for (int64_t j = 0; j < H; ++j) hp[j] = (1.f - z[j]) * hh[j] + z[j] * hp[j];
                        break;
                    }
                    case RnnCell::Lstm: {
                        float* gi = g;
                        float* go = g + H;
                        float* gf = g + 2 * H;
                        float* gc = g + 3 * H;
                        float* cp = c + n * H;
                        const float* P = dir.P;
                        dir.add_input(gi, x, 0, false, P, cp);
                        dir.activate(gi, 0);
                        if (s.input_forget) {
                            for (int64_t j = 0; j < H; ++j) gf[j] = 1.f - gi[j];
                        } else {
                            dir.add_input(gf, x + 2 * H, 2, false, P ? P + 2 * H : nullptr, cp);
                            dir.activate(gf, 0);
                        }
                        dir.add_input(gc, x + 3 * H, 3);
                        dir.activate(gc, 1);
                        for (int64_t j = 0; j < H; ++j) cp[j] = gf[j] * cp[j] + gi[j] * gc[j];
                        dir.add_input(go, x + H, 1, false, P ? P + H : nullptr, cp);
                        dir.activate(go, 0);
                        // h(C_t), unclipped, into gc (no longer needed).
                        activation_map(s.act[d][2], s.alpha[d][2], s.beta[d][2], cp, gc, static_cast<size_t>(H));
                        for (int64_t j = 0; j < H; ++j) hp[j] = go[j] * gc[j];
                        break;
                    }
                }
                if (io.Y) std::memcpy(io.Y + y_at(t, d, n), hp, H * sizeof(float));
            }
        }
        for (int64_t n = 0; n < N; ++n) {
            const bool empty = length_of(s, io.L, n) == 0;
            if (io.Yh) {
                float* dst = io.Yh + state_at(d, n);
                if (empty) std::fill(dst, dst + H, 0.f);
                else std::memcpy(dst, h + n * H, H * sizeof(float));
            }
            if (io.Yc) {
                float* dst = io.Yc + state_at(d, n);
                if (empty) std::fill(dst, dst + H, 0.f);
                else std::memcpy(dst, c + n * H, H * sizeof(float));
            }
        }
    }
}

}  // namespace accel_emu
