// qgemm_split.h - a constant int8 GEMM operand packed in parts of its weight rows (a matmul's output
// columns), so that a run splits across the core's threads and each part reads only its own weights (a
// transformer's [128 x 768] x [768 x 3072] would stream the whole 2.4 MB of weights once per part if it
// were split by X's rows instead). The parts depend on the shapes only; every output element's sum and
// epilogue is the same whichever part computes it, so the bytes do not depend on the thread count either.
//
// Layout: a 128-byte head (the part count and each part's offset), then each part, a qgemm_pack of its
// rows [m0, m1) with the spec's per-row arrays taken from m0.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math/qgemm.h"
#include "ops.h"
#include "ops/quant_util.h"
#include "parallel.h"

namespace accel_emu {
namespace kern {

// Weight rows per unit of a split: a multiple of every path's row tile (4, 8, 2 x 16).
constexpr int64_t kSplitUnit = 64;
// Parts at most: enough for a few tasks per thread; each part gathers X into its kernels' layout again.
constexpr int64_t kMaxSplit = 8;
constexpr size_t kSplitHead = 128;

struct SplitHead {
    int64_t parts;
    int64_t off[kMaxSplit];
};
static_assert(sizeof(SplitHead) <= kSplitHead, "the split's head outgrew its bytes");

// The parts of a GEMM of M weight rows, depth K, run over `rows` X rows: at least kMinMacsPerPart each,
// and where a count near that divides the units, that one (equal parts balance best).
inline int64_t split_count(int64_t M, int64_t K, int64_t rows) {
    const int64_t units = (M + kSplitUnit - 1) / kSplitUnit;
    const int64_t p = std::min(split_parts(units, M * K * rows, kMinMacsPerPart), kMaxSplit);
    for (int64_t d = p; d > p / 2; --d)
        if (units % d == 0) return d;
    return p;
}

// Part p's weight rows [*m0, *m1).
inline void split_range(int64_t M, int64_t parts, int64_t p, int64_t* m0, int64_t* m1) {
    int64_t u0, u1;
    part_range((M + kSplitUnit - 1) / kSplitUnit, parts, p, &u0, &u1);
    *m0 = std::min(M, u0 * kSplitUnit);
    *m1 = std::min(M, u1 * kSplitUnit);
}

// spec's rows [m0, m1).
inline QGemmSpec split_spec(const QGemmSpec& spec, int64_t m0, int64_t m1) {
    QGemmSpec q = spec;
    q.M = m1 - m0;
    if (q.w_zero) q.w_zero += m0;
    if (q.bias) q.bias += m0;
    if (q.scale) q.scale += m0;
    if (q.fbias) q.fbias += m0;
    if (q.fixed) q.fixed += m0;
    return q;
}

// Bytes of the split form for any path (the sizes need spec's M, K, taps and signs only).
inline size_t split_packed_bytes(const QGemmSpec& spec, int64_t parts) {
    size_t total = kSplitHead;
    for (int64_t p = 0; p < parts; ++p) {
        int64_t m0, m1;
        split_range(spec.M, parts, p, &m0, &m1);
        total += qgemm_packed_max(split_spec(spec, m0, m1));
    }
    return total;
}

// Packs w ([M][K] bytes) in `parts` parts into out (split_packed_bytes, 64-byte aligned).
inline void split_pack(QIsa isa, const QGemmSpec& spec, const uint8_t* w, int64_t parts, void* out) {
    auto* head = static_cast<SplitHead*>(out);
    head->parts = parts;
    size_t off = kSplitHead;
    for (int64_t p = 0; p < parts; ++p) {
        int64_t m0, m1;
        split_range(spec.M, parts, p, &m0, &m1);
        const QGemmSpec q = split_spec(spec, m0, m1);
        head->off[p] = static_cast<int64_t>(off);
        qgemm_pack(isa, q, w + m0 * spec.K, static_cast<uint8_t*>(out) + off);
        off += qgemm_packed_max(q);
    }
}

// Scratch of a run over `rows` X rows: X in the kernels' layout, shared by the parts, at the start of
// worker 0's scratch (split_shared_bytes; every worker's scratch skips as many bytes), then each worker's
// own part. Sizes for any path.
inline size_t split_shared_bytes(const QGemmSpec& spec, int64_t rows) {
    return align64(qgemm_xw_shared_bytes(spec.K, rows));
}
inline size_t split_scratch_bytes(const QGemmSpec& spec, int64_t parts, int64_t rows) {
    size_t most = 0;
    for (int64_t p = 0; p < parts; ++p) {
        int64_t m0, m1;
        split_range(spec.M, parts, p, &m0, &m1);
        most = std::max(most, qgemm_scratch_max(split_spec(spec, m0, m1), rows));
    }
    return split_shared_bytes(spec, rows) + most;
}

// qgemm_xw of the split form over the core's threads: y[n * ldy + m] (elem_bytes each), each worker's
// scratch `scratch_offset` bytes into its own (split_scratch_bytes from there); then done(m0, m1) for the
// part's rows on the same worker. X is put in the kernels' layout first, in parts of its rows.
template <class Done>
void split_xw(const KernelArgs& a, const void* packed, int64_t M, int64_t K, int64_t rows, const uint8_t* x,
              int64_t ldx, void* y, int64_t ldy, int64_t elem_bytes, size_t scratch_offset, Done done) {
    const auto* head = static_cast<const SplitHead*>(packed);
    const int64_t parts = head->parts;
    const auto* first = static_cast<const uint8_t*>(packed) + head->off[0];
    char* shared = static_cast<char*>(a.scratch) + scratch_offset;
    const size_t skip = scratch_offset + align64(qgemm_xw_shared_bytes(K, rows));
    // Rows in units of 16 (the transposes' blocks), each part about kMinElemsPerPart bytes or more.
    const int64_t units = (rows + 15) / 16;
    a.par->for_ranges(units, split_parts(units, rows * K, kMinElemsPerPart), [&](int64_t u0, int64_t u1, int) {
        qgemm_xw_prepare(first, rows, x, ldx, shared, u0 * 16, std::min(rows, u1 * 16));
    });
    a.par->for_each(parts, [&](int64_t p, int worker) {
        int64_t m0, m1;
        split_range(M, parts, p, &m0, &m1);
        qgemm_xw_shared(static_cast<const uint8_t*>(packed) + head->off[p], rows, shared,
                        static_cast<char*>(y) + m0 * elem_bytes, ldy, static_cast<char*>(a.scratch_for(worker)) + skip);
        done(m0, m1);
    });
}

}  // namespace kern
}  // namespace accel_emu
