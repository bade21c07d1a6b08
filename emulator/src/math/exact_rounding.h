// exact_rounding.h - included by every source whose float arithmetic must round exactly where onnxruntime's
// and the devices' reference rules do (the int8 kernels, the ops that make their requantization constants,
// the fix-point rules): each multiply and add rounded on its own, none contracted into an FMA the rule does
// not have (aarch64 has FMA in its baseline; x86 code built for AVX2 or AVX-512 would too).
//
// Including this header is the declaration: emulator/exact_rounding.cmake finds the sources that include it
// and builds them with -ffp-contract=off and ACCEL_EMU_EXACT_ROUNDING defined; it stops the configure when a
// source under src/math or src/ops includes an int8 arithmetic header without it. The check below stops a
// build that compiles such a source without the flag (a configure older than the include: re-run cmake).
#pragma once

#if !defined(ACCEL_EMU_EXACT_ROUNDING)
#error "built without -ffp-contract=off: re-run cmake (exact_rounding.cmake gives it to sources that include this)"
#endif
