// cpu_isa.h - which vector instructions a model's float kernels use: the best this CPU has, capped by
// ACCEL_EMU_ISA (portable, avx2, avx512vnni, amx: the names of the int8 paths, qgemm.h) so that tests run
// the paths of older CPUs on a new one. Chosen when a model loads and kept in its Graph, so a model's
// checks, its scratch and prepared sizes and its runs all see the same choice.
#pragma once

#include <cstdint>

#include "math/qgemm.h"

namespace accel_emu {

// Slowest to fastest. Avx512 is AVX-512F (the packed conv GEMM, the depthwise conv of depthwise_avx512.cc);
// Avx2 is AVX2 with FMA (the packed conv GEMM's AVX2 tile).
enum class FloatIsa : int32_t { Portable = 0, Avx2 = 1, Avx512 = 2 };

// The path ACCEL_EMU_ISA names (read at each call), or the fastest there is when it is unset or unknown.
QIsa isa_cap();

// The float path a model loaded now runs: the CPU's best, within isa_cap() (avx512vnni and amx allow
// Avx512).
FloatIsa float_isa_select();

const char* float_isa_name(FloatIsa isa);

}  // namespace accel_emu
