// matmul.cc - numpy matmul (FORMAT.md op 3): 1-D operands promoted (and the added dim dropped from Y),
// batch dims broadcast. Stacked A against an unbatched B is one tall GEMM, on AVX-512 against B packed at load
// when B is a constant (math/matmul_packed.h); otherwise one GEMM per batch.
#include <algorithm>

#include "math/activation.h"
#include "math/conv_gemm.h"
#include "math/cpu_isa.h"
#include "math/gemm.h"
#include "math/matmul_packed.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/sgemm_split.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "matmul";

struct Plan {
    int64_t M, N, K, Kb;
    int nb;                        // broadcast batch rank
    int64_t batch[kMaxDims];       // broadcast batch dims
    int64_t sa[kMaxDims], sb[kMaxDims];  // element strides of A's and B's matrices per batch dim (0: broadcast)
    int64_t count;                 // batch count
    bool ok;                       // batch dims broadcast
    bool overflow;                 // their product overflows
    int64_t ydims[kMaxDims];
    int yrank;
};

Plan plan(const TensorDesc& a, const TensorDesc& b) {
    Plan p{};
    const int ra = a.ndim, rb = b.ndim;
    p.M = ra >= 2 ? a.dims[ra - 2] : 1;
    p.K = a.dims[ra - 1];
    p.Kb = rb >= 2 ? b.dims[rb - 2] : b.dims[0];
    p.N = rb >= 2 ? b.dims[rb - 1] : 1;
    const int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    p.nb = ba > bb ? ba : bb;
    p.ok = true;
    // Each operand's own matrix size (B's inner dim is Kb: K may differ until validate refuses it), so
    // that the running strides stay products of that operand's dims, which the reader bounds.
    int64_t stra = p.M * p.K, strb = p.Kb * p.N;
    for (int i = p.nb - 1; i >= 0; --i) {
        const int ia = i - (p.nb - ba), ib = i - (p.nb - bb);
        const int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
        if (da != db && da != 1 && db != 1) p.ok = false;
        p.batch[i] = da > db ? da : db;
        p.sa[i] = da == 1 ? 0 : stra;
        p.sb[i] = db == 1 ? 0 : strb;
        stra *= da;
        strb *= db;
    }
    p.count = 1;  // a product of broadcast maxima: not bounded by any tensor until Y is checked
    for (int i = 0; i < p.nb; ++i)
        if (!kern::mul_ok(p.count, p.batch[i], &p.count)) p.overflow = true, p.count = 1;
    p.yrank = 0;
    for (int i = 0; i < p.nb; ++i) p.ydims[p.yrank++] = p.batch[i];
    if (ra >= 2) p.ydims[p.yrank++] = p.M;
    if (rb >= 2) p.ydims[p.yrank++] = p.N;
    return p;
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& a = *kern::input(g, n, 0);
    const TensorDesc& b = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    if (a.ndim < 1 || b.ndim < 1) return fail(err, kOp, "operands must have rank >= 1");
    const Plan p = plan(a, b);
    if (p.K != p.Kb) return fail(err, kOp, cat("inner dims differ: A ", kern::dims_str(a), ", B ", kern::dims_str(b)));
    if (!p.ok)
        return fail(err, kOp,
                    cat("batch dims of A ", kern::dims_str(a), " and B ", kern::dims_str(b), " do not broadcast"));
    if (p.overflow) return fail(err, kOp, "batch size overflows");
    bool same = y.ndim == p.yrank;
    for (int i = 0; same && i < p.yrank; ++i) same = y.dims[i] == p.ydims[i];
    if (!same) {
        TensorDesc want;
        want.ndim = p.yrank;
        for (int i = 0; i < p.yrank; ++i) want.dims[i] = p.ydims[i];
        return fail(err, kOp, cat("output shape ", kern::dims_str(y), " should be ", kern::dims_str(want)));
    }
    if (p.M > kern::kBlasIntMax || p.N > kern::kBlasIntMax || p.K > kern::kBlasIntMax)
        return fail(err, kOp, cat("GEMM size ", p.M, "x", p.N, "x", p.K, " exceeds the BLAS int range"));
    return true;
}

// Is this the tall case (A's matrices stacked against one B) with B a constant the AVX-512 path packs at load?
// At least one kernel panel of rows, two of columns and half a depth block: the BLAS does thinner products
// better (a classifier's one row is a GEMV; a depth under 128 or fewer than 96 columns leave the kernel
// mostly loading and storing its tile: measured, 3136x96x384 1.19x the BLAS's time, 64x64x64 1.16x, where
// 49x768x3072 is 0.69x and 784x192x768 0.93x).
bool packed_b(const Graph& g, const Node& n) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1);
    if (g.float_isa != FloatIsa::Avx512 || b.kind != TensorKind::Constant || b.ndim < 2) return false;
    const Plan p = plan(a, b);
    const int64_t b_count = kern::prod(b.dims, 0, b.ndim) / (p.K * p.N);
    const int64_t a_count = kern::prod(a.dims, 0, a.ndim) / (p.M * p.K);
    return b_count == 1 && a_count == p.count && p.M * p.count >= kConvMR && p.K >= 128 && p.N >= 2 * kConvNR;
}

int64_t tall_rows(const Plan& p) { return p.M * p.count; }

size_t scratch_bytes(const Graph& g, const Node& n) {
    if (!packed_b(g, n)) return 0;
    const Plan p = plan(*kern::input(g, n, 0), *kern::input(g, n, 1));
    return static_cast<size_t>(matmul_packed_scratch_floats(tall_rows(p), p.K)) * sizeof(float);
}

size_t prepared_bytes(const Graph& g, const Node& n) {
    if (!packed_b(g, n)) return 0;
    const Plan p = plan(*kern::input(g, n, 0), *kern::input(g, n, 1));
    return static_cast<size_t>(matmul_packed_b_floats(p.K, p.N)) * sizeof(float);
}

void prepare(const Graph& g, const Node& n, const void* const* in, void* out) {
    if (!packed_b(g, n)) return;
    const Plan p = plan(*kern::input(g, n, 0), *kern::input(g, n, 1));
    matmul_pack_b(static_cast<const float*>(in[1]), p.K, p.N, static_cast<float*>(out));
}

// The packed path's parts: runs of W's column panels (the rows packed once per part, W read once), or, with
// fewer panels than parts, row ranges too; each part computed whole by one worker, the activation applied
// while it is in cache. Every element's sum is the same whatever the parts (matmul_packed.h), so the parts
// follow the workers: about 4 each, one when there is one worker.
void run_packed(const KernelArgs& args, const Plan& p) {
    const Node& n = *args.node;
    const float* A = kern::in_f(args, 0);
    float* Y = kern::out_f(args, 0);
    const auto* packed = static_cast<const float*>(args.prepared);
    const int64_t M = tall_rows(p), N = p.N, K = p.K;
    const int64_t col_panels = (N + kConvNR - 1) / kConvNR, row_panels = (M + kConvMR - 1) / kConvMR;
    const int64_t workers = args.par->workers();
    const int64_t parts =
        workers == 1 ? 1
                     : std::min<int64_t>(split_parts(col_panels * row_panels, M * N * K, kMinMacsPerPart), 4 * workers);
    const int64_t col_parts = std::min(col_panels, parts),
                  row_parts = std::min(row_panels, (parts + col_parts - 1) / col_parts);
    (parts > 1 ? *args.par : Par::serial()).for_each(col_parts * row_parts, [&](int64_t task, int worker) {
        int64_t p0, p1, q0, q1;
        part_range(col_panels, col_parts, task % col_parts, &p0, &p1);
        part_range(row_panels, row_parts, task / col_parts, &q0, &q1);
        const int64_t c0 = p0 * kConvNR, c1 = std::min(N, p1 * kConvNR), r0 = q0 * kConvMR,
                      r1 = std::min(M, q1 * kConvMR);
        matmul_packed(args.graph->float_isa, A, K, N, packed, Y, static_cast<float*>(args.scratch_for(worker)), r0, r1,
                      c0, c1);
        if (n.act != Act::None)
            for (int64_t r = r0; r < r1; ++r)
                apply_activation(n.act, n.act_alpha, n.act_beta, Y + r * N + c0, static_cast<size_t>(c1 - c0));
    });
}

// The GEMMs (one tall one, or one per batch) are cut into blocks of their outputs (sgemm_split.h): a GEMM
// is cut only when there are fewer of them than a split's most blocks, so an attention's many heads stay
// whole. Each block is one single-threaded BLAS call and its activation, on one worker; the blocks depend
// on the shapes only, so the bits do not depend on the thread count.
void run(const KernelArgs& args) {
    const Node& n = *args.node;
    const Plan p = plan(kern::in_desc(args, 0), kern::in_desc(args, 1));
    if (args.prepared) {
        run_packed(args, p);
        return;
    }
    const float* A = kern::in_f(args, 0);
    const float* B = kern::in_f(args, 1);
    float* Y = kern::out_f(args, 0);
    const int64_t N = p.N, K = p.K;
    const int64_t a_count = kern::prod(kern::in_desc(args, 0).dims, 0, kern::in_desc(args, 0).ndim) / (p.M * p.K);
    const int64_t b_count = kern::prod(kern::in_desc(args, 1).dims, 0, kern::in_desc(args, 1).ndim) / (p.K * p.N);
    const int64_t tall = p.M * p.count;
    // A's matrices are contiguous and each meets the same B: stack them into one GEMM.
    const bool stacked = b_count == 1 && a_count == p.count && tall <= kern::kBlasIntMax;
    const int64_t gemms = stacked ? 1 : p.count, M = stacked ? tall : p.M;
    const kern::SgemmSplit s =
        kern::sgemm_split(M, N, K, gemms >= kern::kSgemmMaxBlocks ? 1 : kern::kSgemmMaxBlocks / gemms);
    auto block = [&](int64_t t, int64_t b) {  // block b of GEMM t
        int64_t oa = 0, ob = 0, rest = t;
        for (int d = p.nb - 1; !stacked && d >= 0; --d) {  // batch t's index in each batch dim
            const int64_t i = rest % p.batch[d];
            rest /= p.batch[d];
            oa += i * p.sa[d];
            ob += i * p.sb[d];
        }
        int64_t r0, r1, c0, c1;
        kern::sgemm_block(s, M, N, b, &r0, &r1, &c0, &c1);
        float* Yb = Y + t * M * N + r0 * N + c0;
        sgemm(false, false, static_cast<int>(r1 - r0), static_cast<int>(c1 - c0), static_cast<int>(K), 1.f,
              A + oa + r0 * K, static_cast<int>(K), B + ob + c0, static_cast<int>(N), 0.f, Yb, static_cast<int>(N));
        kern::bias_act_rows(Yb, r1 - r0, c1 - c0, N, nullptr, n.act, n.act_alpha, n.act_beta);
    };
    if (s.blocks > 1) {
        args.par->for_each(gemms * s.blocks, [&](int64_t task, int) { block(task / s.blocks, task % s.blocks); });
    } else {
        // Whole GEMMs, in runs of batches as the split of their work gives.
        const int64_t parts = split_parts(gemms, gemms * M * N * K, kMinMacsPerPart);
        args.par->for_ranges(gemms, parts, [&](int64_t t0, int64_t t1, int) {
            for (int64_t t = t0; t < t1; ++t) block(t, 0);
        });
    }
}

}  // namespace

const OpDef kMatMulDef = {kOp, validate, scratch_bytes, run, prepared_bytes, prepare};

}  // namespace accel_emu
