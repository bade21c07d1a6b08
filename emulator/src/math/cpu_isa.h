// cpu_isa.h - which vector instructions a model's float kernels use: the best this CPU has, capped by
// ACCEL_EMU_ISA (portable, avx2, avx512vnni, amx, neon, neondot: the names of the int8 paths, qgemm.h) so
// that tests run the paths of older CPUs on a new one. Chosen when a model loads and kept in its Graph, so a
// model's checks, its scratch and prepared sizes and its runs all see the same choice.
#pragma once

#include <cstdint>

#include "math/qgemm.h"

namespace accel_emu {

// Avx512 is AVX-512F (the packed conv GEMM, the depthwise conv of depthwise_avx512.cc); Avx2 is AVX2 with FMA
// (the packed conv GEMM's AVX2 tile); Neon is aarch64's Advanced SIMD (the packed conv GEMM's NEON tile,
// conv_gemm_neon.cc). Within x86-64 the order is slowest to fastest.
enum class FloatIsa : int32_t { Portable = 0, Avx2 = 1, Avx512 = 2, Neon = 3 };

// The int8 path ACCEL_EMU_ISA names (read at each call) into *cap; false when it is unset or unknown.
bool isa_cap(QIsa* cap);

// best (the fastest int8 path this CPU has) within the ACCEL_EMU_ISA cap: the slower of the two when the
// cap names a path of best's architecture, Portable when it names portable or another architecture's.
QIsa isa_capped(QIsa best);

// The float path a model loaded now runs: the CPU's best, within the cap (avx512vnni and amx allow
// Avx512, neon and neondot allow Neon).
FloatIsa float_isa_select();

const char* float_isa_name(FloatIsa isa);

}  // namespace accel_emu
