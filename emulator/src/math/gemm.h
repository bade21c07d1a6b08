// gemm.h - the emulator's single GEMM entry point: a CBLAS when the build found one (ACCEL_HAVE_CBLAS,
// with ACCEL_CBLAS_SCIPY_PREFIX for scipy-openblas32's prefixed symbols), else a portable blocked GEMM.
#pragma once

namespace accel_emu {

// Makes the BLAS single-threaded: one emulated core is one thread. Call once, before any sgemm.
void gemm_init();

// "scipy-openblas32", a system CBLAS's name, or "portable (...)".
const char* gemm_backend_name();

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T; A is [M,K] ([K,M] if transA),
// B is [K,N] ([N,K] if transB). With beta == 0, C is not read (it may hold garbage or NaN).
// Empty sizes are handled here and never reach the BLAS; leading dimensions too small for the shapes
// make the call do nothing (callers never pass them). Single-threaded, allocation-free, thread safe.
void sgemm(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
           float beta, float* C, int ldc);

// The portable implementation, always built (also used to test the BLAS path against).
void sgemm_portable(bool transA, bool transB, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                    int ldb, float beta, float* C, int ldc);
const char* sgemm_portable_isa();

}  // namespace accel_emu
