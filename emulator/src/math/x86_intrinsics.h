// x86_intrinsics.h - <immintrin.h> for the files with x86 vector code (each function carries its own target
// attribute; include this only inside `#if defined(__x86_64__) && defined(__GNUC__)`).
#pragma once

// gcc 12 reports its own intrinsics' deliberately undefined pass-through operands (__Y = __Y) as (maybe)
// uninitialized once inlined; the warning's location is inside immintrin.h, so it is silenced before it.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
