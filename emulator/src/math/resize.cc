// resize.cc - see resize.h. Per run, each output row and column is mapped once to its input row/column
// (nearest) or its two neighbours and weights (linear), with ONNX's coordinate formulas evaluated in
// float as onnxruntime does (resize_coords.cc); the planes are then filled from those tables. Nearest
// copies an output row that repeats the previous one's input row, and replicates pixels for integer
// upscale factors; linear interpolates each needed input row horizontally once and blends two such rows
// per output row. The tables are made once per run; the planes may then be filled in parts, in any order.
#include "math/resize.h"

#include <cstring>

#include "math/math_util.h"

namespace accel_emu {
namespace {

using namespace resize;

size_t table_bytes(int64_t n, bool linear) {
    return static_cast<size_t>(n) * (linear ? sizeof(LinearTap) : sizeof(int64_t));
}

// Nearest: one output row from input row `src`. rep > 0: every input pixel fills rep outputs in turn.
ACCEL_HOT void nearest_row(const float* ACCEL_RESTRICT src, const int64_t* ix, int64_t OW, int64_t W, int64_t rep,
                           float* ACCEL_RESTRICT dst) {
    if (rep == 1) {
        std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(W));
    } else if (rep == 2) {
        for (int64_t j = 0; j < W; ++j) dst[2 * j] = dst[2 * j + 1] = src[j];
    } else if (rep > 2) {
        for (int64_t j = 0; j < W; ++j)
            for (int64_t k = 0; k < rep; ++k) dst[j * rep + k] = src[j];
    } else {
        for (int64_t j = 0; j < OW; ++j) dst[j] = src[ix[j]];
    }
}

// The integer factor f when output column j reads input column j / f for every j, else 0.
int64_t replication(const int64_t* ix, int64_t OW, int64_t W) {
    if (OW % W != 0) return 0;
    const int64_t f = OW / W;
    for (int64_t j = 0; j < OW; ++j)
        if (ix[j] != j / f) return 0;
    return f;
}

void nearest_planes(const ResizeGeom& q, const float* X, float* Y, const void* tables, int64_t p0, int64_t p1) {
    const int64_t* iy = static_cast<const int64_t*>(tables);
    const int64_t* ix = iy + q.OH;
    const int64_t rep = replication(ix, q.OW, q.W);
    for (int64_t p = p0; p < p1; ++p) {
        const float* x = X + p * q.H * q.W;
        float* y = Y + p * q.OH * q.OW;
        for (int64_t oy = 0; oy < q.OH; ++oy) {
            float* dst = y + oy * q.OW;
            if (oy > 0 && iy[oy] == iy[oy - 1]) std::memcpy(dst, dst - q.OW, sizeof(float) * static_cast<size_t>(q.OW));
            else nearest_row(x + iy[oy] * q.W, ix, q.OW, q.W, rep, dst);
        }
    }
}

// Linear: input row `src` interpolated along W into dst[OW].
ACCEL_HOT void lerp_row(const float* ACCEL_RESTRICT src, const LinearTap* tx, int64_t OW, float* ACCEL_RESTRICT dst) {
    for (int64_t j = 0; j < OW; ++j) dst[j] = tx[j].w0 * src[tx[j].i0] + tx[j].w1 * src[tx[j].i1];
}

ACCEL_HOT void blend_rows(const float* ACCEL_RESTRICT a, const float* ACCEL_RESTRICT b, float wa, float wb, int64_t n,
                          float* ACCEL_RESTRICT dst) {
    for (int64_t j = 0; j < n; ++j) dst[j] = wa * a[j] + wb * b[j];
}

// Two horizontally interpolated input rows, reused while consecutive output rows need them.
struct RowCache {
    float* buf[2];
    int64_t row[2] = {-1, -1};
    // The row `r` (computing it if absent) without evicting row `keep`.
    const float* get(const float* x, int64_t W, const LinearTap* tx, int64_t OW, int64_t r, int64_t keep) {
        for (int s = 0; s < 2; ++s)
            if (row[s] == r) return buf[s];
        const int s = row[0] == keep ? 1 : 0;
        lerp_row(x + r * W, tx, OW, buf[s]);
        row[s] = r;
        return buf[s];
    }
};

void linear_planes(const ResizeGeom& q, const float* X, float* Y, const void* tables, float* rows, int64_t p0,
                   int64_t p1) {
    const LinearTap* ty = static_cast<const LinearTap*>(tables);
    const LinearTap* tx = ty + q.OH;
    for (int64_t p = p0; p < p1; ++p) {
        const float* x = X + p * q.H * q.W;
        float* y = Y + p * q.OH * q.OW;
        RowCache cache{{rows, rows + q.OW}};
        for (int64_t oy = 0; oy < q.OH; ++oy) {
            const LinearTap& t = ty[oy];
            const float* a = cache.get(x, q.W, tx, q.OW, t.i0, t.i1);
            const float* b = cache.get(x, q.W, tx, q.OW, t.i1, t.i0);
            blend_rows(a, b, t.w0, t.w1, q.OW, y + oy * q.OW);
        }
    }
}

}  // namespace

size_t resize_table_bytes(const ResizeGeom& q) {
    return (table_bytes(q.OH, q.linear) + table_bytes(q.OW, q.linear) + 63) / 64 * 64;
}

size_t resize_row_bytes(const ResizeGeom& q) {
    return q.linear ? 2 * static_cast<size_t>(q.OW) * sizeof(float) : 0;  // two horizontally resized rows
}

void resize_tables(const ResizeGeom& q, void* tables) {
    if (q.linear) {
        LinearTap* ty = static_cast<LinearTap*>(tables);
        linear_table(q.ph, ty);
        linear_table(q.pw, ty + q.OH);
    } else {
        int64_t* iy = static_cast<int64_t*>(tables);
        nearest_table(q.ph, iy);
        nearest_table(q.pw, iy + q.OH);
    }
}

void resize_planes(const ResizeGeom& q, const float* X, float* Y, const void* tables, void* rows, int64_t p0,
                   int64_t p1) {
    if (q.linear) linear_planes(q, X, Y, tables, static_cast<float*>(rows), p0, p1);
    else nearest_planes(q, X, Y, tables, p0, p1);
}

}  // namespace accel_emu
