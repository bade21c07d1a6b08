// sgemm_split.h - one float GEMM split across the core's threads in blocks of its output, each block one
// single-threaded sgemm call. The blocks are bands of whole rows or of whole columns (the longer side is cut:
// each block packs the other operand again, so a [128 x 768] x [768 x 3072] is cut into column bands and
// re-reads only X's 400 KB per band) and depend on the shapes only.
//
// Bits: each output element is the dot product of one row of op(A) and one column of op(B), which every
// block holds whole. The BLAS sums it in its K-blocks, which OpenBLAS derives from K alone; what else the
// sum's order depends on (the portable GEMM's tiles, a BLAS's small-matrix kernel for blocks under a size)
// is a function of the block's shape, which is a function of the GEMM's shape. So the bytes are the same
// for any thread count, though they may differ in the last bit from one unsplit call.
#pragma once

#include <algorithm>
#include <cstdint>

#include "parallel.h"

namespace accel_emu {
namespace kern {

// Columns per unit of a column band (a multiple of the BLAS kernels' column tiles, 16 and 32 floats),
// rows per unit of a row band.
constexpr int64_t kSgemmColUnit = 64;
constexpr int64_t kSgemmRowUnit = 32;
// Blocks at most: a few tasks per thread for balance; each block packs its other operand again.
constexpr int64_t kSgemmMaxBlocks = 8;
// Rows or columns per band at least: a band packs the other operand once for its outputs, so narrow bands
// cost CPU time (under load, 128-column bands of a [197 x 3072] x [3072 x 768] took 8-10% more than one
// call). With 192, ViT-B/16 and BERT-base at one thread took 1% longer than unsplit on a quiet machine.
constexpr int64_t kSgemmMinBand = 192;

struct SgemmSplit {
    bool by_rows;   // row bands (else column bands)
    int64_t extent;  // M or N: the side that is cut
    int64_t unit;    // kSgemmRowUnit or kSgemmColUnit
    int64_t blocks;  // 1: not split
};

// The split of an [M x K] x [K x N] product into at most max_blocks bands of kSgemmMinBand or more and of
// about kMinMacsPerPart multiply-adds or more, where a count near that divides the units, that one (equal
// bands balance best).
inline SgemmSplit sgemm_split(int64_t M, int64_t N, int64_t K, int64_t max_blocks = kSgemmMaxBlocks) {
    SgemmSplit s;
    s.by_rows = M > N;
    s.extent = s.by_rows ? M : N;
    s.unit = s.by_rows ? kSgemmRowUnit : kSgemmColUnit;
    const int64_t units = (s.extent + s.unit - 1) / s.unit;
    const int64_t most = std::max<int64_t>(1, std::min(max_blocks, units / (kSgemmMinBand / s.unit)));
    const int64_t p = std::min(split_parts(units, M * N * K, kMinMacsPerPart), most);
    s.blocks = p;
    for (int64_t d = p; d > p / 2; --d)
        if (units % d == 0) {
            s.blocks = d;
            break;
        }
    return s;
}

// Block b's rows [*r0, *r1) and columns [*c0, *c1) of the [M x N] output.
inline void sgemm_block(const SgemmSplit& s, int64_t M, int64_t N, int64_t b, int64_t* r0, int64_t* r1, int64_t* c0,
                        int64_t* c1) {
    int64_t u0, u1;
    part_range((s.extent + s.unit - 1) / s.unit, s.blocks, b, &u0, &u1);
    const int64_t i0 = std::min(s.extent, u0 * s.unit), i1 = std::min(s.extent, u1 * s.unit);
    *r0 = s.by_rows ? i0 : 0;
    *r1 = s.by_rows ? i1 : M;
    *c0 = s.by_rows ? 0 : i0;
    *c1 = s.by_rows ? N : i1;
}

}  // namespace kern
}  // namespace accel_emu
