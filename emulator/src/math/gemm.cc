// gemm.cc - dispatch of sgemm to the CBLAS found at build time, or to the portable GEMM.
#include "math/gemm.h"

#include <cstddef>

#if defined(ACCEL_HAVE_CBLAS)
#include <cblas.h>
#if defined(ACCEL_CBLAS_SCIPY_PREFIX)
#define ACCEL_CBLAS_SGEMM scipy_cblas_sgemm
#else
#define ACCEL_CBLAS_SGEMM cblas_sgemm
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
    ACCEL_CBLAS_SGEMM(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N, K,
                      alpha, A, lda, B, ldb, beta, C, ldc);
#else
    sgemm_portable(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

}  // namespace accel_emu
