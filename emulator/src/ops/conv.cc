// conv.cc - 2-D convolution (FORMAT.md op 1): the checks, the geometry, the choice of path, and the
// run. Depthwise convs (group == C == M) run a direct kernel (math/depthwise.cc; with AVX-512, over stride
// phases and flattened rows: math/depthwise_avx512.cc). With AVX-512 the others run on the packed conv GEMM
// (math/conv_gemm.h: weights and bias packed at load by prepare(); the input read over its stride phases,
// in place for 1x1 stride-1 unpadded convs, or else as im2col panels gathered one at a time). Without it: 1x1 stride-1
// unpadded conv is one sgemm per group per image on the input as it lies, the rest im2col (math/im2col.cc) + sgemm over
// column tiles so the scratch stays cache-sized whatever the image size. Bias and the fused activation are applied to
// each result block while it is hot.
#include <algorithm>

#include "math/activation.h"
#include "math/conv_gemm.h"
#include "math/conv_geom.h"
#include "math/depthwise.h"
#include "math/gemm.h"
#include "math/im2col.h"
#include "op_params.h"
#include "ops/conv_shape.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "conv";
// im2col tile budget in floats (1 MiB): big enough for the GEMM to run at speed, small enough for L2.
constexpr int64_t kTileFloats = 256 * 1024;

// The im2col tile: columns per GEMM for the im2col + sgemm path (0 for depthwise and in-place 1x1).
void set_tile(ConvGeom* q) {
    if (q->depthwise || q->pointwise) {
        q->tile = 0;
    } else {
        int64_t t = kTileFloats / q->K;
        t = std::max<int64_t>(t, 64);
        if (t < q->P) t = t / 16 * 16;  // whole cache lines per row of the column buffer
        q->tile = std::min(t, q->P);
    }
}

ConvGeom geom(const Graph& g, const Node& n) {
    ConvGeom q = kern::conv_geometry(g, n);
    set_tile(&q);
    return q;
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    if (!kern::check_common(g, n, err)) return false;
    ConvGeom q;
    if (!kern::check_conv_shapes(g, n, kOp, &q, err)) return false;
    set_tile(&q);  // products below are bounded by tensor sizes, so cannot overflow
    if (q.Mg > kern::kBlasIntMax || q.P > kern::kBlasIntMax || q.K > kern::kBlasIntMax)
        return kern::fail(err, kOp, kern::cat("GEMM size ", q.Mg, "x", q.P, "x", q.K, " exceeds the BLAS int range"));
    int64_t scratch = 0;
    if (!kern::mul_ok(q.K, q.tile, &scratch) || !kern::mul_ok(scratch, 4, &scratch) ||
        static_cast<uint64_t>(scratch) > kern::kMaxScratchBytes)
        return kern::fail(err, kOp, "im2col scratch too large");
    return true;
}

// How a conv runs: depthwise ones directly; on the AVX-512 and NEON paths the rest on the packed conv GEMM (weights
// packed at load); otherwise im2col + sgemm.
enum class Path { Depthwise, Packed, Im2col };

Path path(const Graph& g, const ConvGeom& q) {
    if (q.depthwise) return Path::Depthwise;
    // Fewer output positions than a vector (squeeze-excite 1x1 convs): a GEMV, which the BLAS does better.
    if ((g.float_isa == FloatIsa::Avx512 || g.float_isa == FloatIsa::Neon) && q.P >= 16) return Path::Packed;
    return Path::Im2col;
}

size_t scratch_bytes(const Graph& g, const Node& n) {
    const ConvGeom q = geom(g, n);
    switch (path(g, q)) {
        case Path::Depthwise:
            return depthwise_avx512_applies(g.float_isa, q)
                       ? static_cast<size_t>(depthwise_avx512_scratch_floats(q)) * sizeof(float)
                       : 0;
        case Path::Packed: return static_cast<size_t>(conv_gemm_scratch_floats(q)) * sizeof(float);
        case Path::Im2col: break;
    }
    return static_cast<size_t>(q.K * q.tile) * sizeof(float);
}

size_t prepared_bytes(const Graph& g, const Node& n) {
    const ConvGeom q = geom(g, n);
    switch (path(g, q)) {
        case Path::Packed: return static_cast<size_t>(conv_packed_weight_floats(q.G, q.Mg, q.K)) * sizeof(float);
        default: return 0;
    }
}

void prepare(const Graph& g, const Node& n, const void* const* in, void* out) {
    const ConvGeom q = geom(g, n);
    const float* w = static_cast<const float*>(in[1]);
    const float* bias = n.inputs.size() > 2 ? static_cast<const float*>(in[2]) : nullptr;
    conv_pack_weights(w, bias, q.G, q.Mg, q.K, static_cast<float*>(out));
}

// Each path splits its work into parts that depend on the shapes only (parallel.h), so the result is the
// same whatever the thread count: images x channels (depthwise), images x groups x column blocks x
// runs of output-channel panels (packed GEMM), images x groups x column tiles (im2col + sgemm, one
// single-threaded BLAS call per tile).
void run(const KernelArgs& a) {
    const ConvGeom q = geom(*a.graph, *a.node);
    const Node& n = *a.node;
    const float* X = kern::in_f(a, 0);
    const float* Wt = kern::in_f(a, 1);
    const float* B = n.inputs.size() > 2 ? kern::in_f(a, 2) : nullptr;
    float* Y = kern::out_f(a, 0);
    const int64_t HW = q.H * q.W;
    auto col = [&](int worker) { return static_cast<float*>(a.scratch_for(worker)); };
    const Par& par = *a.par;

    const Path how = path(*a.graph, q);
    if (how == Path::Depthwise) {
        const bool avx512 = depthwise_avx512_applies(a.graph->float_isa, q);
        const int64_t parts = split_parts(q.N * q.C, q.N * q.C * q.P * q.kh * q.kw, kMinMacsPerPart);
        par.for_ranges(q.N * q.C, parts, [&](int64_t u0, int64_t u1, int worker) {
            while (u0 < u1) {  // a run of channels within one image
                const int64_t i = u0 / q.C, b0 = u0 % q.C, b1 = std::min(q.C, b0 + (u1 - u0));
                if (avx512) {
                    depthwise_avx512(q, X + i * q.C * HW, Wt, B, n.act, n.act_alpha, n.act_beta, b0, b1,
                                     Y + i * q.C * q.P, col(worker));
                } else {
                    for (int64_t c = b0; c < b1; ++c) {
                        float* y = Y + (i * q.C + c) * q.P;
                        depthwise_plane(q, X + (i * q.C + c) * HW, Wt + c * q.kh * q.kw, B ? B[c] : 0.f, y);
                        apply_activation(n.act, n.act_alpha, n.act_beta, y, static_cast<size_t>(q.P));
                    }
                }
                u0 += b1 - b0;
            }
        });
        return;
    }
    const int64_t gemms = q.N * q.G, macs = gemms * q.Mg * q.P * q.K;
    if (how == Path::Packed) {
        const float* packed = static_cast<const float*>(a.prepared);
        const int64_t group_floats = conv_packed_weight_floats(1, q.Mg, q.K);
        const int64_t blocks = conv_gemm_column_blocks(q), panels = conv_gemm_panels(q);
        // Runs of panels when there are fewer column blocks than the workers can share (about 4 tasks each,
        // for balance); each run of an im2col conv gathers the block's input again, so at least 4 panels (32
        // channels) per run keep that small, and one worker takes none. Unlike the other splits this one
        // may follow the thread count: every output element's sum and activation is the same whatever the
        // runs (a row's part of a column block is computed whole by one micro-kernel call sequence).
        const int64_t wanted =
            std::min<int64_t>(split_parts(gemms * blocks * panels, macs, kMinMacsPerPart), 4 * par.workers());
        int64_t runs = par.workers() == 1 ? 1 : std::min(panels, (wanted + gemms * blocks - 1) / (gemms * blocks));
        if (!q.pointwise) runs = std::min(runs, std::max<int64_t>(1, panels / 4));
        (wanted > 1 ? par : Par::serial()).for_each(gemms * blocks * runs, [&](int64_t task, int worker) {
            const int64_t r = task % runs, blk = task / runs % blocks, gemm = task / runs / blocks;
            const int64_t i = gemm / q.G, gi = gemm % q.G;
            int64_t p0, p1;
            part_range(panels, runs, r, &p0, &p1);
            conv_gemm(q, packed + gi * group_floats, X + (i * q.C + gi * q.Cg) * HW, n.act, n.act_alpha, n.act_beta,
                      Y + (i * q.M + gi * q.Mg) * q.P, col(worker), blk, p0, p1);
        });
        return;
    }
    const int Mg = static_cast<int>(q.Mg), P = static_cast<int>(q.P), K = static_cast<int>(q.K);
    // Column tiles: the im2col tile, or for a 1x1 conv read in place runs of 64 columns.
    const int64_t tile =
        q.pointwise ? std::max<int64_t>(64, q.P / split_parts(q.P / 64, macs / gemms, kMinMacsPerPart)) : q.tile;
    const int64_t tiles = (q.P + tile - 1) / tile;
    const int64_t parts = split_parts(gemms * tiles, macs, kMinMacsPerPart) > 1 ? gemms * tiles : 1;
    par.for_each(parts, [&](int64_t part, int worker) {
        const int64_t first = parts == 1 ? 0 : part, last = parts == 1 ? gemms * tiles : part + 1;
        for (int64_t task = first; task < last; ++task) {
            const int64_t gemm = task / tiles, p0 = task % tiles * tile, t = std::min(tile, q.P - p0);
            const int64_t i = gemm / q.G, gi = gemm % q.G;
            const float* x = X + (i * q.C + gi * q.Cg) * HW;
            const float* w = Wt + gi * q.Mg * q.K;
            const float* b = B ? B + gi * q.Mg : nullptr;
            float* y = Y + (i * q.M + gi * q.Mg) * q.P;
            if (q.pointwise) {
                sgemm(false, false, Mg, static_cast<int>(t), K, 1.f, w, K, x + p0, P, 0.f, y + p0, P);
            } else {
                im2col(q, x, p0, t, col(worker));
                sgemm(false, false, Mg, static_cast<int>(t), K, 1.f, w, K, col(worker), static_cast<int>(t), 0.f,
                      y + p0, P);
            }
            kern::bias_act_rows(y + p0, q.Mg, t, q.P, b, n.act, n.act_alpha, n.act_beta);
        }
    });
}

}  // namespace

const OpDef kConvDef = {kOp, validate, scratch_bytes, run, prepared_bytes, prepare};

}  // namespace accel_emu
