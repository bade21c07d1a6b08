// gemm.cc - dispatch of sgemm to the CBLAS found at build time, or to the portable GEMM.
#include "math/gemm.h"

#include <cstddef>

#if defined(ACCEL_HAVE_CBLAS)
#include <cblas.h>
#if defined(ACCEL_CBLAS_SCIPY_PREFIX)
#define ACCEL_CBLAS_SGEMM scipy_cblas_sgemm
#define ACCEL_CBLAS_SGEMV scipy_cblas_sgemv
#else
#define ACCEL_CBLAS_SGEMM cblas_sgemm
#define ACCEL_CBLAS_SGEMV cblas_sgemv
// OpenBLAS has this; a generic CBLAS (reference, BLIS's, ATLAS) does not, hence weak.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
#endif
#endif

namespace accel_emu {

void gemm_init() {
#if defined(ACCEL_HAVE_CBLAS)
#if defined(ACCEL_CBLAS_SCIPY_PREFIX)
    scipy_openblas_set_num_threads(1);
#else
    if (openblas_set_num_threads) openblas_set_num_threads(1);
#endif
#endif
}

const char* gemm_backend_name() {
#if defined(ACCEL_HAVE_CBLAS)
#if defined(ACCEL_BLAS_NAME)
    return ACCEL_BLAS_NAME;
#elif defined(ACCEL_CBLAS_SCIPY_PREFIX)
    return "scipy-openblas32";
#else
    return "cblas";
#endif
#else
    return sgemm_portable_isa();
#endif
}

namespace {

// Scales C by beta without reading it when beta == 0 (C may be uninitialized).
void scale_c(int M, int N, float beta, float* C, int ldc) {
    if (beta == 1.f) return;
    for (int i = 0; i < M; ++i) {
        float* c = C + static_cast<ptrdiff_t>(i) * ldc;
        if (beta == 0.f)
            for (int j = 0; j < N; ++j) c[j] = 0.f;
        else
            for (int j = 0; j < N; ++j) c[j] *= beta;
    }
}

bool args_ok(bool tA, bool tB, int M, int N, int K, int lda, int ldb, int ldc) {
    auto at_least = [](int ld, int n) { return ld >= (n > 1 ? n : 1); };
    return M >= 0 && N >= 0 && K >= 0 && at_least(lda, tA ? M : K) && at_least(ldb, tB ? K : N) && at_least(ldc, N);
}

}  // namespace

void sgemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
           float beta, float* C, int ldc) {
    if (!args_ok(transA, transB, M, N, K, lda, ldb, ldc) || M == 0 || N == 0) return;
    if (K == 0 || alpha == 0.f) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
#if defined(ACCEL_HAVE_CBLAS)
    // One row or one column: a GEMV, which the BLAS's sgemm runs through its blocked GEMM path (3-10x
    // slower on a classifier's fully connected layer or a squeeze-excite 1x1 conv). beta == 0 is applied
    // here, so that C's garbage is never read.
    if (M == 1 || N == 1) {
        if (beta == 0.f) scale_c(M, N, 0.f, C, ldc);
        const float b1 = beta == 0.f ? 1.f : beta;
        if (M == 1)  // C[1,N] = op(B)^T-wise: y = op(B)^T a, a row of A (a column of A^T: stride lda)
            ACCEL_CBLAS_SGEMV(CblasRowMajor, transB ? CblasNoTrans : CblasTrans, transB ? N : K, transB ? K : N, alpha,
                              B, ldb, A, transA ? lda : 1, b1, C, 1);
        else  // C[M,1] = op(A) b, b a column of B (stride ldb) or a row of B^T
            ACCEL_CBLAS_SGEMV(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transA ? K : M, transA ? M : K, alpha,
                              A, lda, B, transB ? 1 : ldb, b1, C, ldc);
        return;
    }
    ACCEL_CBLAS_SGEMM(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N, K,
                      alpha, A, lda, B, ldb, beta, C, ldc);
#else
    sgemm_portable(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

}  // namespace accel_emu
