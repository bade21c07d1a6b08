// gemm_portable.cc - a blocked SGEMM for builds without a CBLAS (GotoBLAS structure: pack a KCxNC panel
// of B and an MCxKC block of A, then an MRxNR register-tiled micro-kernel). Written with GCC vector
// extensions so it compiles to the baseline SIMD width; on x86-64 an AVX-512 or AVX2+FMA instance is
// chosen at run time when the CPU has one. Packing buffers live on the stack (at most 200 KB): no
// allocation, safe from any thread.
#include <cstddef>
#include <cstring>

#include "math/gemm.h"

namespace accel_emu {
namespace {

typedef float v4f __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));

constexpr int KC = 256;

#define ALWAYS_INLINE __attribute__((always_inline)) inline

template <class V, int MR, int NV, int MB, int NB>
struct Blocked {
    static constexpr int L = sizeof(V) / sizeof(float);
    static constexpr int NR = NV * L;
    static constexpr int MC = MR * MB;
    static constexpr int NC = NR * NB;

    // Ap: ceil(mc/MR) panels of [kc][MR], rows past mc zero, scaled by alpha.
    static ALWAYS_INLINE void pack_a(bool tA, const float* A, int lda, int i0, int k0, int mc, int kc, float alpha,
                                     float* __restrict__ Ap) {
        for (int ip = 0; ip < mc; ip += MR) {
            const int m = mc - ip < MR ? mc - ip : MR;
            float* dst = Ap + static_cast<ptrdiff_t>(ip) * kc;
            for (int k = 0; k < kc; ++k) {
                for (int i = 0; i < m; ++i) {
                    const ptrdiff_t r = i0 + ip + i, c = k0 + k;
                    dst[k * MR + i] = alpha * (tA ? A[c * lda + r] : A[r * lda + c]);
                }
                for (int i = m; i < MR; ++i) dst[k * MR + i] = 0.f;
            }
        }
    }

    // Bp: ceil(nc/NR) panels of [kc][NR], columns past nc zero.
    static ALWAYS_INLINE void pack_b(bool tB, const float* B, int ldb, int k0, int j0, int kc, int nc,
                                     float* __restrict__ Bp) {
        for (int jp = 0; jp < nc; jp += NR) {
            const int n = nc - jp < NR ? nc - jp : NR;
            float* dst = Bp + static_cast<ptrdiff_t>(jp) * kc;
            for (int k = 0; k < kc; ++k) {
                const ptrdiff_t r = k0 + k;
                if (!tB) {
                    const float* src = B + r * ldb + j0 + jp;
                    for (int j = 0; j < n; ++j) dst[k * NR + j] = src[j];
                } else {
                    for (int j = 0; j < n; ++j) dst[k * NR + j] = B[static_cast<ptrdiff_t>(j0 + jp + j) * ldb + r];
                }
                for (int j = n; j < NR; ++j) dst[k * NR + j] = 0.f;
            }
        }
    }

    // C[m,n] += Ap-panel * Bp-panel, accumulating an MRxNR tile in registers.
    static ALWAYS_INLINE void micro(int kc, const float* __restrict__ Ap, const float* __restrict__ Bp,
                                    float* __restrict__ C, ptrdiff_t ldc, int m, int n) {
        V acc[MR][NV];
        for (int i = 0; i < MR; ++i)
            for (int v = 0; v < NV; ++v) acc[i][v] = V{};
        for (int k = 0; k < kc; ++k) {
            V b[NV];
            for (int v = 0; v < NV; ++v) std::memcpy(&b[v], Bp + k * NR + v * L, sizeof(V));
            for (int i = 0; i < MR; ++i) {
                const float a = Ap[k * MR + i];
                for (int v = 0; v < NV; ++v) acc[i][v] += a * b[v];
            }
        }
        if (m == MR && n == NR) {
            for (int i = 0; i < MR; ++i)
                for (int v = 0; v < NV; ++v) {
                    V c;
                    std::memcpy(&c, C + i * ldc + v * L, sizeof(V));
                    c += acc[i][v];
                    std::memcpy(C + i * ldc + v * L, &c, sizeof(V));
                }
        } else {
            float t[MR][NR];
            std::memcpy(t, acc, sizeof(t));
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) C[i * ldc + j] += t[i][j];
        }
    }

    // C += alpha * op(A) * op(B); C has already been scaled by beta.
    static ALWAYS_INLINE void run(bool tA, bool tB, int M, int N, int K, float alpha, const float* A, int lda,
                                  const float* B, int ldb, float* C, int ldc) {
        alignas(64) float Ap[MC * KC];
        alignas(64) float Bp[KC * NC];
        for (int jc = 0; jc < N; jc += NC) {
            const int nc = N - jc < NC ? N - jc : NC;
            for (int pc = 0; pc < K; pc += KC) {
                const int kc = K - pc < KC ? K - pc : KC;
                pack_b(tB, B, ldb, pc, jc, kc, nc, Bp);
                for (int ic = 0; ic < M; ic += MC) {
                    const int mc = M - ic < MC ? M - ic : MC;
                    pack_a(tA, A, lda, ic, pc, mc, kc, alpha, Ap);
                    for (int jr = 0; jr < nc; jr += NR)
                        for (int ir = 0; ir < mc; ir += MR)
                            micro(kc, Ap + static_cast<ptrdiff_t>(ir) * kc, Bp + static_cast<ptrdiff_t>(jr) * kc,
                                  C + static_cast<ptrdiff_t>(ic + ir) * ldc + jc + jr, ldc, mc - ir < MR ? mc - ir : MR,
                                  nc - jr < NR ? nc - jr : NR);
                }
            }
        }
    }
};

#if defined(__x86_64__) && defined(__GNUC__)
#define ACCEL_GEMM_X86_VARIANTS 1
__attribute__((target("avx512f,avx2,fma"))) void gemm_avx512(bool tA, bool tB, int M, int N, int K, float alpha,
                                                             const float* A, int lda, const float* B, int ldb, float* C,
                                                             int ldc) {
    Blocked<v16f, 12, 2, 6, 4>::run(tA, tB, M, N, K, alpha, A, lda, B, ldb, C, ldc);
}
__attribute__((target("avx2,fma"))) void gemm_avx2(bool tA, bool tB, int M, int N, int K, float alpha, const float* A,
                                                   int lda, const float* B, int ldb, float* C, int ldc) {
    Blocked<v8f, 6, 2, 12, 4>::run(tA, tB, M, N, K, alpha, A, lda, B, ldb, C, ldc);
}
#endif

#if defined(__aarch64__)
using GenericKernel = Blocked<v8f, 6, 2, 12, 8>;  // 32 NEON registers: a 6x16 tile fits
#else
using GenericKernel = Blocked<v4f, 4, 2, 16, 16>;  // 16 SSE registers: 4x8
#endif

void gemm_generic(bool tA, bool tB, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                  float* C, int ldc) {
    GenericKernel::run(tA, tB, M, N, K, alpha, A, lda, B, ldb, C, ldc);
}

enum class Isa { Generic, Avx2, Avx512 };

Isa isa() {
#if defined(ACCEL_GEMM_X86_VARIANTS)
    static const Isa chosen = __builtin_cpu_supports("avx512f")                                 ? Isa::Avx512
                              : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? Isa::Avx2
                                                                                                : Isa::Generic;
    return chosen;
#else
    return Isa::Generic;
#endif
}

}  // namespace

const char* sgemm_portable_isa() {
    switch (isa()) {
        case Isa::Avx512: return "portable (avx512)";
        case Isa::Avx2: return "portable (avx2+fma)";
        case Isa::Generic: break;
    }
    return "portable";
}

void sgemm_portable(bool tA, bool tB, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                    int ldb, float beta, float* C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (beta != 1.f)
        for (int i = 0; i < M; ++i) {
            float* c = C + static_cast<ptrdiff_t>(i) * ldc;
            if (beta == 0.f)
                for (int j = 0; j < N; ++j) c[j] = 0.f;
            else
                for (int j = 0; j < N; ++j) c[j] *= beta;
        }
    if (K <= 0 || alpha == 0.f) return;
#if defined(ACCEL_GEMM_X86_VARIANTS)
    switch (isa()) {
        case Isa::Avx512: gemm_avx512(tA, tB, M, N, K, alpha, A, lda, B, ldb, C, ldc); return;
        case Isa::Avx2: gemm_avx2(tA, tB, M, N, K, alpha, A, lda, B, ldb, C, ldc); return;
        case Isa::Generic: break;
    }
#endif
    gemm_generic(tA, tB, M, N, K, alpha, A, lda, B, ldb, C, ldc);
}

}  // namespace accel_emu
