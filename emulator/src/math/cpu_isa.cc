// cpu_isa.cc - the ACCEL_EMU_ISA cap and the float path (cpu_isa.h).
#include "math/cpu_isa.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace accel_emu {

namespace {
FloatIsa float_hardware() {
// The same condition as the vector kernels' own builds (conv_gemm_avx512.cc, conv_gemm_avx2.cc,
// depthwise_avx512.cc).
#if defined(__x86_64__) && defined(__GNUC__)
    static const FloatIsa best = __builtin_cpu_supports("avx512f")                                 ? FloatIsa::Avx512
                                 : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? FloatIsa::Avx2
                                                                                                   : FloatIsa::Portable;
    return best;
#elif defined(__aarch64__)
    return FloatIsa::Neon;  // Advanced SIMD is part of every aarch64 CPU
#else
    return FloatIsa::Portable;
#endif
}

bool arm_path(QIsa isa) { return isa == QIsa::Neon || isa == QIsa::NeonDot; }
bool x86_path(QIsa isa) { return isa == QIsa::Avx2 || isa == QIsa::Avx512Vnni || isa == QIsa::Amx; }
}  // namespace

bool isa_cap(QIsa* cap) {
    const char* name = std::getenv("ACCEL_EMU_ISA");
    static const QIsa kAll[] = {QIsa::Portable, QIsa::Avx2, QIsa::Avx512Vnni, QIsa::Amx, QIsa::Neon, QIsa::NeonDot};
    if (name)
        for (QIsa isa : kAll)
            if (std::strcmp(name, qisa_name(isa)) == 0) return *cap = isa, true;
    return false;
}

QIsa isa_capped(QIsa best) {
    QIsa cap;
    if (!isa_cap(&cap)) return best;
    // The numbers rank paths only within one architecture (qgemm.h).
    if ((x86_path(cap) && x86_path(best)) || (arm_path(cap) && arm_path(best))) return std::min(best, cap);
    return QIsa::Portable;
}

FloatIsa float_isa_select() {
    const FloatIsa best = float_hardware();
    QIsa cap;
    if (!isa_cap(&cap)) return best;
    if (best == FloatIsa::Neon) return arm_path(cap) ? FloatIsa::Neon : FloatIsa::Portable;
    const FloatIsa allowed = cap == QIsa::Avx2                             ? FloatIsa::Avx2
                             : cap == QIsa::Avx512Vnni || cap == QIsa::Amx ? FloatIsa::Avx512
                                                                           : FloatIsa::Portable;
    return std::min(best, allowed);
}

const char* float_isa_name(FloatIsa isa) {
    switch (isa) {
        case FloatIsa::Portable: return "portable";
        case FloatIsa::Avx2: return "avx2";
        case FloatIsa::Avx512: return "avx512";
        case FloatIsa::Neon: return "neon";
    }
    return "portable";
}

}  // namespace accel_emu
