// conv.cc - 2-D convolution (FORMAT.md op 1): the checks, the geometry, the choice of path, and the
// run. Depthwise convs (group == C == M) run a direct kernel (math/depthwise.cc; with AVX-512, over stride
// phases and flattened rows: math/depthwise_avx512.cc; planes of at most 32x32 outputs 16 channels to a vector:
// math/conv_small_depthwise.cc). With AVX-512 the others run on the channel-vectorized GEMM when the output
// plane is small (math/conv_small.h: 7x7 and 14x14 planes fill its vectors, not the 48-wide tiles) or else,
// with AVX-512 or AVX2, on the packed conv GEMM (math/conv_gemm.h: weights and bias packed at load by prepare(); the
// input read over its stride phases, in place for 1x1 stride-1 unpadded convs, or else as im2col panels gathered one at
// a time). Without it: 1x1 stride-1 unpadded conv is one sgemm per group per image on the input as it lies, the rest
// im2col (math/im2col.cc) + sgemm over column tiles so the scratch stays cache-sized whatever the image size. Bias and
// the fused activation are applied to each result block while it is hot.
#include <algorithm>

#include "math/activation.h"
#include "math/conv_gemm.h"
#include "math/conv_geom.h"
#include "math/conv_small.h"
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

// How a conv runs: depthwise ones directly; on the AVX-512 path the rest on the small-plane or the packed conv
// GEMM, on AVX2 and NEON on the packed conv GEMM (weights packed at load, each in its own layout); otherwise
// im2col + sgemm.
enum class Path { Depthwise, Small, Packed, Im2col };

Path path(const Graph& g, const ConvGeom& q) {
    if (q.depthwise) return Path::Depthwise;
    if (conv_small_applies(g.float_isa, q)) return Path::Small;
    // Fewer output positions than a vector (squeeze-excite 1x1 convs): a GEMV, which the BLAS does better.
    if (conv_gemm_applies(g.float_isa) && q.P >= 16) return Path::Packed;
    return Path::Im2col;
}

size_t scratch_bytes(const Graph& g, const Node& n) {
    const ConvGeom q = geom(g, n);
    switch (path(g, q)) {
        case Path::Depthwise:
            return depthwise_avx512_applies(g.float_isa, q)
                       ? static_cast<size_t>(depthwise_avx512_scratch_floats(q)) * sizeof(float)
                       : 0;
        case Path::Small: return static_cast<size_t>(conv_small_scratch_floats(q)) * sizeof(float);
        case Path::Packed: return static_cast<size_t>(conv_gemm_scratch_floats(q)) * sizeof(float);
        case Path::Im2col: break;
    }
    return static_cast<size_t>(q.K * q.tile) * sizeof(float);
}

size_t prepared_bytes(const Graph& g, const Node& n) {
    const ConvGeom q = geom(g, n);
    switch (path(g, q)) {
        case Path::Small: return static_cast<size_t>(conv_small_packed_floats(q.G, q.Mg, q.K)) * sizeof(float);
        case Path::Packed: return static_cast<size_t>(conv_packed_weight_floats(q.G, q.Mg, q.K)) * sizeof(float);
        default: return 0;
    }
}

void prepare(const Graph& g, const Node& n, const void* const* in, void* out) {
    const ConvGeom q = geom(g, n);
    const float* w = static_cast<const float*>(in[1]);
    const float* bias = n.inputs.size() > 2 ? static_cast<const float*>(in[2]) : nullptr;
    if (path(g, q) == Path::Small) conv_small_pack_weights(w, bias, q.G, q.Mg, q.K, static_cast<float*>(out));
    else conv_pack_weights(w, bias, q.G, q.Mg, q.K, static_cast<float*>(out));
}

// The small-plane path (math/conv_small.h): images x groups x runs of channel panels x ranges of position
// blocks. Any split gives every output element the same operations, so the runs may follow the thread count
// (as the packed GEMM's): runs of panels first (each part of an im2col conv gathers its positions' columns
// again), then position ranges when there are fewer panels than parts wanted.
void run_small(const KernelArgs& a, const ConvGeom& q, int64_t gemms, int64_t macs) {
    const Node& n = *a.node;
    const float* X = kern::in_f(a, 0);
    float* Y = kern::out_f(a, 0);
    const float* packed = static_cast<const float*>(a.prepared);
    const int64_t group_floats = conv_small_packed_floats(1, q.Mg, q.K);
    const int64_t panels = conv_small_panels(q), blocks = conv_small_position_blocks(q);
    const int64_t wanted =
        std::min<int64_t>(split_parts(gemms * panels * blocks, macs, kMinMacsPerPart), 4 * a.par->workers());
    const int64_t per_gemm = a.par->workers() == 1 ? 1 : (wanted + gemms - 1) / gemms;
    const int64_t runs =
        std::max((panels + conv_small_max_run(q) - 1) / conv_small_max_run(q), std::min(panels, per_gemm));
    const int64_t ranges = std::min(blocks, (per_gemm + runs - 1) / runs);
    (wanted > 1 ? *a.par : Par::serial()).for_each(gemms * runs * ranges, [&](int64_t task, int worker) {
        const int64_t pr = task % ranges, r = task / ranges % runs, gemm = task / ranges / runs;
        const int64_t i = gemm / q.G, gi = gemm % q.G;
        int64_t p0, p1, b0, b1;
        part_range(panels, runs, r, &p0, &p1);
        part_range(blocks, ranges, pr, &b0, &b1);
        conv_small(q, packed + gi * group_floats, X + (i * q.C + gi * q.Cg) * q.H * q.W, n.act, n.act_alpha, n.act_beta,
                   Y + (i * q.M + gi * q.Mg) * q.P, static_cast<float*>(a.scratch_for(worker)), p0, p1, b0, b1);
    });
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
        // The small-plane kernel takes 16 channels a vector (conv_small_depthwise.cc): parts split on whole vectors.
        const int64_t per = avx512 && depthwise_small_applies(q) ? 16 : 1, units = (q.C + per - 1) / per;
        const int64_t parts = split_parts(q.N * units, q.N * q.C * q.P * q.kh * q.kw, kMinMacsPerPart);
        par.for_ranges(q.N * units, parts, [&](int64_t u0, int64_t u1, int worker) {
            while (u0 < u1) {  // a run of channels within one image
                const int64_t i = u0 / units, e = std::min(u1, (i + 1) * units);
                const int64_t b0 = (u0 - i * units) * per, b1 = std::min(q.C, (e - i * units) * per);
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
                u0 = e;
            }
        });
        return;
    }
    const int64_t gemms = q.N * q.G, macs = gemms * q.Mg * q.P * q.K;
    if (how == Path::Small) {
        run_small(a, q, gemms, macs);
        return;
    }
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
            conv_gemm(a.graph->float_isa, q, packed + gi * group_floats, X + (i * q.C + gi * q.Cg) * HW, n.act,
                      n.act_alpha, n.act_beta, Y + (i * q.M + gi * q.Mg) * q.P, col(worker), blk, p0, p1);
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
