// gemm.cc - ONNX Gemm (FORMAT.md op 2): Y = act(alpha * op(A) * op(B) + beta * C), C broadcast.
#include "math/gemm.h"
#include "math/activation.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/sgemm_split.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "gemm";

struct Dims { int64_t M, N, K, Kb; };

Dims dims_of(const GemmParams& p, const TensorDesc& a, const TensorDesc& b) {
    const bool tA = p.trans_a != 0, tB = p.trans_b != 0;
    return {tA ? a.dims[1] : a.dims[0], tB ? b.dims[0] : b.dims[1], tA ? a.dims[0] : a.dims[1],
            tB ? b.dims[1] : b.dims[0]};
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& a = *kern::input(g, n, 0);
    const TensorDesc& b = *kern::input(g, n, 1);
    const TensorDesc* c = kern::input(g, n, 2);
    const TensorDesc& y = kern::output(g, n, 0);
    const GemmParams p = GemmParams::of(n);
    if (p.trans_a != 0 && p.trans_a != 1) return fail(err, kOp, cat("transA ", p.trans_a, " is not 0 or 1"));
    if (p.trans_b != 0 && p.trans_b != 1) return fail(err, kOp, cat("transB ", p.trans_b, " is not 0 or 1"));
    if (a.ndim != 2) return fail(err, kOp, cat("A rank ", a.ndim, " is not 2"));
    if (b.ndim != 2) return fail(err, kOp, cat("B rank ", b.ndim, " is not 2"));
    const Dims d = dims_of(p, a, b);
    if (d.K != d.Kb)
        return fail(err, kOp,
                    cat("inner dims differ: A ", kern::dims_str(a), " transA ", p.trans_a, ", B ", kern::dims_str(b),
                        " transB ", p.trans_b));
    if (y.ndim != 2 || y.dims[0] != d.M || y.dims[1] != d.N)
        return fail(err, kOp, cat("output shape ", kern::dims_str(y), " should be [", d.M, ",", d.N, "]"));
    if (c) {
        const bool ok =
            c->ndim == 0 || (c->ndim == 1 && (c->dims[0] == 1 || c->dims[0] == d.N)) ||
            (c->ndim == 2 && (c->dims[0] == 1 || c->dims[0] == d.M) && (c->dims[1] == 1 || c->dims[1] == d.N));
        if (!ok)
            return fail(err, kOp, cat("C shape ", kern::dims_str(*c), " does not broadcast to [", d.M, ",", d.N, "]"));
    }
    if (d.M > kern::kBlasIntMax || d.N > kern::kBlasIntMax || d.K > kern::kBlasIntMax)
        return fail(err, kOp, cat("GEMM size ", d.M, "x", d.N, "x", d.K, " exceeds the BLAS int range"));
    return true;
}

size_t scratch_bytes(const Graph&, const Node&) { return 0; }

// Y[r0:r1, c0:c1] = beta * C broadcast to [M,N] (Y's rows N long).
void fill_c(const TensorDesc& cd, const float* c, float beta, int64_t N, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
            float* y) {
    const int64_t rows = cd.ndim == 2 ? cd.dims[0] : 1;
    const int64_t cols = cd.ndim >= 1 ? cd.dims[cd.ndim - 1] : 1;
    for (int64_t i = r0; i < r1; ++i) {
        const float* cr = c + (rows == 1 ? 0 : i) * cols;
        float* yr = y + i * N;
        if (cols == 1) {
            const float v = beta * cr[0];
            for (int64_t j = c0; j < c1; ++j) yr[j] = v;
        } else {
            for (int64_t j = c0; j < c1; ++j) yr[j] = beta * cr[j];
        }
    }
}

// Each block of the output (sgemm_split.h) is computed whole by one worker: C, the product, the activation.
void run(const KernelArgs& a) {
    const Node& n = *a.node;
    const TensorDesc& ad = kern::in_desc(a, 0);
    const TensorDesc& bd = kern::in_desc(a, 1);
    const GemmParams p = GemmParams::of(n);
    const Dims d = dims_of(p, ad, bd);
    const float alpha = p.alpha, beta = p.beta;
    const float* C = n.inputs.size() > 2 ? kern::in_f(a, 2) : nullptr;
    const bool with_c = C && beta != 0.f;
    const float* A = kern::in_f(a, 0);
    const float* B = kern::in_f(a, 1);
    const int64_t lda = ad.dims[1], ldb = bd.dims[1];
    const bool tA = p.trans_a != 0, tB = p.trans_b != 0;
    float* Y = kern::out_f(a, 0);
    const kern::SgemmSplit s = kern::sgemm_split(d.M, d.N, d.K);
    a.par->for_each(s.blocks, [&](int64_t b, int) {
        int64_t r0, r1, c0, c1;
        kern::sgemm_block(s, d.M, d.N, b, &r0, &r1, &c0, &c1);
        if (with_c) fill_c(kern::in_desc(a, 2), C, beta, d.N, r0, r1, c0, c1, Y);
        // op(A)'s rows r0.. start at column r0 of A when transposed; op(B)'s columns c0.. at row c0 of B.
        const float* Ab = tA ? A + r0 : A + r0 * lda;
        const float* Bb = tB ? B + c0 * ldb : B + c0;
        float* Yb = Y + r0 * d.N + c0;
        sgemm(tA, tB, static_cast<int>(r1 - r0), static_cast<int>(c1 - c0), static_cast<int>(d.K), alpha, Ab,
              static_cast<int>(lda), Bb, static_cast<int>(ldb), with_c ? 1.f : 0.f, Yb, static_cast<int>(d.N));
        kern::bias_act_rows(Yb, r1 - r0, c1 - c0, d.N, nullptr, n.act, n.act_alpha, n.act_beta);
    });
}

}  // namespace

const OpDef kGemmDef = {kOp, validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
