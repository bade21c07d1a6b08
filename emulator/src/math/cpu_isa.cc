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
#else
    return FloatIsa::Portable;
#endif
}
}  // namespace

QIsa isa_cap() {
    const char* cap = std::getenv("ACCEL_EMU_ISA");
    static const QIsa kAll[] = {QIsa::Portable, QIsa::Avx2, QIsa::Avx512Vnni, QIsa::Amx};
    if (cap)
        for (QIsa isa : kAll)
            if (std::strcmp(cap, qisa_name(isa)) == 0) return isa;
    return QIsa::Amx;
}

FloatIsa float_isa_select() {
    const QIsa cap = isa_cap();
    const FloatIsa allowed = cap == QIsa::Portable ? FloatIsa::Portable
                             : cap == QIsa::Avx2   ? FloatIsa::Avx2
                                                   : FloatIsa::Avx512;
    return std::min(float_hardware(), allowed);
}

const char* float_isa_name(FloatIsa isa) {
    switch (isa) {
        case FloatIsa::Portable: return "portable";
        case FloatIsa::Avx2: return "avx2";
        case FloatIsa::Avx512: return "avx512";
    }
    return "portable";
}

}  // namespace accel_emu
