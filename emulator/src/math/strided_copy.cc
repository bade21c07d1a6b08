// strided_copy.cc - see strided_copy.h. A strided view is first reduced to as few dims as possible (size-1
// dims dropped, neighbours merged where the input walks them as one run), then the work is an outer
// odometer around one inner job on the innermost output axis: a memcpy (contiguous in the input), a
// fill (one element repeated), a tile transpose (the input's contiguous axis is another output axis)
// or a strided read. Threaded, the output is cut along one axis into views of their own.
#include "math/strided_copy.h"

#include <cstring>

#include "dtypes.h"
#include "parallel.h"

namespace accel_emu {
namespace kern {

void dense_strides(const int64_t* dims, int ndim, int64_t* strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; --i) strides[i] = s, s *= dims[i];
}

namespace {

// Elements are moved as unsigned integers of their size, whatever they hold.
using E1 = uint8_t;
using E2 = uint16_t;
using E4 = uint32_t;
using E8 = uint64_t;

// Output dims with the input strides and the output strides that walk them, outermost first. The output's
// innermost stride is 1 (a block of a dense output, cut along one axis, is still dense along its last).
struct StridedView {
    int ndim = 0;
    int64_t dims[kMaxDims] = {0};
    int64_t strides[kMaxDims] = {0};
    int64_t ostrides[kMaxDims] = {0};
};

// The view with size-1 dims dropped and neighbours merged where both sides walk them as one run.
StridedView simplify(const int64_t* dims, const int64_t* strides, const int64_t* ostrides, int ndim) {
    StridedView r;
    for (int i = 0; i < ndim; ++i) {
        const int64_t d = dims[i], s = strides[i], o = ostrides[i];
        if (d == 1) continue;
        if (r.ndim > 0 && r.strides[r.ndim - 1] == s * d && r.ostrides[r.ndim - 1] == o * d) {
            r.dims[r.ndim - 1] *= d;
            r.strides[r.ndim - 1] = s;
            r.ostrides[r.ndim - 1] = o;
            continue;
        }
        r.dims[r.ndim] = d, r.strides[r.ndim] = s, r.ostrides[r.ndim] = o, ++r.ndim;
    }
    return r;
}

// out[i*ldo + j] = in[i + j*ldi] for i < rows, j < cols, within one tile (callers keep it small).
template <class T>
inline void transpose_scalar(const T* in, int64_t ldi, T* out, int64_t ldo, int64_t rows, int64_t cols) {
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) out[i * ldo + j] = in[i + j * ldi];
}

#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
// 4-byte elements: 4x4 blocks through vector shuffles (SSE on x86-64, NEON on arm64), edges scalar.
typedef uint32_t V4 __attribute__((vector_size(16)));

inline V4 load4(const E4* p) {
    V4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline void store4(E4* p, V4 v) { std::memcpy(p, &v, sizeof v); }

inline void transpose_tile(const E4* in, int64_t ldi, E4* out, int64_t ldo, int64_t rows, int64_t cols) {
    const int64_t r4 = rows & ~int64_t(3), c4 = cols & ~int64_t(3);
    for (int64_t i = 0; i < r4; i += 4) {
        for (int64_t j = 0; j < c4; j += 4) {
            const E4* p = in + i + j * ldi;
            const V4 a = load4(p), b = load4(p + ldi), c = load4(p + 2 * ldi), d = load4(p + 3 * ldi);
            const V4 ab_lo = __builtin_shufflevector(a, b, 0, 4, 1, 5);
            const V4 ab_hi = __builtin_shufflevector(a, b, 2, 6, 3, 7);
            const V4 cd_lo = __builtin_shufflevector(c, d, 0, 4, 1, 5);
            const V4 cd_hi = __builtin_shufflevector(c, d, 2, 6, 3, 7);
            E4* q = out + i * ldo + j;
            store4(q, __builtin_shufflevector(ab_lo, cd_lo, 0, 1, 4, 5));
            store4(q + ldo, __builtin_shufflevector(ab_lo, cd_lo, 2, 3, 6, 7));
            store4(q + 2 * ldo, __builtin_shufflevector(ab_hi, cd_hi, 0, 1, 4, 5));
            store4(q + 3 * ldo, __builtin_shufflevector(ab_hi, cd_hi, 2, 3, 6, 7));
        }
        transpose_scalar(in + i + c4 * ldi, ldi, out + i * ldo + c4, ldo, 4, cols - c4);
    }
    transpose_scalar(in + r4, ldi, out + r4 * ldo, ldo, rows - r4, cols);
}
#endif

template <class T>
inline void transpose_tile(const T* in, int64_t ldi, T* out, int64_t ldo, int64_t rows, int64_t cols) {
    transpose_scalar(in, ldi, out, ldo, rows, cols);
}

// out[i*ldo + j] = in[i + j*ldi] for i < rows, j < cols, in tiles of one cache line of input per column.
template <class T>
void transpose_2d(const T* in, int64_t ldi, T* out, int64_t ldo, int64_t rows, int64_t cols) {
    constexpr int64_t B = 64 / sizeof(T);
    for (int64_t i0 = 0; i0 < rows; i0 += B) {
        const int64_t ni = rows - i0 < B ? rows - i0 : B;
        for (int64_t j0 = 0; j0 < cols; j0 += B) {
            const int64_t nj = cols - j0 < B ? cols - j0 : B;
            transpose_tile(in + i0 + j0 * ldi, ldi, out + i0 * ldo + j0, ldo, ni, nj);
        }
    }
}

// n elements in[0], in[s], in[2s], ... into out[0..n).
template <class T>
inline void copy_run(const T* in, int64_t s, T* out, int64_t n) {
    if (s == 1) {
        std::memcpy(out, in, sizeof(T) * n);
    } else if (s == 0) {
        const T x = *in;
        for (int64_t j = 0; j < n; ++j) out[j] = x;
    } else {
        for (int64_t j = 0; j < n; ++j) out[j] = in[j * s];
    }
}

template <class T>
void copy_view(const T* in, T* out, const StridedView& v) {
    if (v.ndim == 0) {
        *out = *in;
        return;
    }
    const int last = v.ndim - 1;
    const int64_t n = v.dims[last], s = v.strides[last];
    int tb = -1;  // an outer output axis along which the input is contiguous: transposed in tiles
    if (s != 0 && s != 1)
        for (int i = 0; i < last; ++i)
            if (v.strides[i] == 1) tb = i;
    const int64_t* os = v.ostrides;
    // Odometer over the other axes.
    int64_t ext[kMaxDims], si[kMaxDims], so[kMaxDims], idx[kMaxDims] = {0};
    int no = 0;
    int64_t blocks = 1;
    for (int i = 0; i < last; ++i)
        if (i != tb) ext[no] = v.dims[i], si[no] = v.strides[i], so[no] = os[i], blocks *= v.dims[i], ++no;
    int64_t oi = 0, oo = 0;
    for (int64_t t = 0; t < blocks; ++t) {
        if (tb >= 0) transpose_2d(in + oi, s, out + oo, os[tb], v.dims[tb], n);
        else copy_run(in + oi, s, out + oo, n);
        for (int d = no - 1; d >= 0; --d) {
            oi += si[d];
            oo += so[d];
            if (++idx[d] < ext[d]) break;
            oi -= si[d] * ext[d];
            oo -= so[d] * ext[d];
            idx[d] = 0;
        }
    }
}

void copy_typed(const void* origin, const StridedView& v, size_t esize, void* out) {
    switch (esize) {
        case 1: copy_view(static_cast<const E1*>(origin), static_cast<E1*>(out), v); break;
        case 2: copy_view(static_cast<const E2*>(origin), static_cast<E2*>(out), v); break;
        case 4: copy_view(static_cast<const E4*>(origin), static_cast<E4*>(out), v); break;
        case 8: copy_view(static_cast<const E8*>(origin), static_cast<E8*>(out), v); break;
        default: break;  // every dtype has one of the sizes above
    }
}

}  // namespace

void strided_copy(const void* origin, const int64_t* strides, const TensorDesc& y, void* out) {
    strided_copy(origin, strides, y, out, Par::serial());
}

void strided_copy(const void* origin, const int64_t* strides, const TensorDesc& y, void* out, const Par& par) {
    int64_t os[kMaxDims];
    dense_strides(y.dims, y.ndim, os);
    const size_t esize = dtype_size(y.dtype);
    // Cut along one output axis: the outermost that has as many indices as the parts wanted, else the
    // longest. Each part is the view with that axis narrowed: the same moves, so the same bytes.
    const int64_t want = split_parts(y.numel, y.numel, kMinElemsPerPart);
    int ax = -1;
    for (int i = 0; i < y.ndim && ax < 0; ++i)
        if (y.dims[i] >= want) ax = i;
    for (int i = 0; i < y.ndim && want > 1; ++i)
        if (ax < 0 || (y.dims[ax] < want && y.dims[i] > y.dims[ax])) ax = i;
    const int64_t parts = ax < 0 ? 1 : split_parts(y.dims[ax], y.numel, kMinElemsPerPart);
    if (parts <= 1) {
        copy_typed(origin, simplify(y.dims, strides, os, y.ndim), esize, out);
        return;
    }
    par.for_ranges(y.dims[ax], parts, [&](int64_t i0, int64_t i1, int) {
        int64_t dims[kMaxDims];
        for (int i = 0; i < y.ndim; ++i) dims[i] = y.dims[i];
        dims[ax] = i1 - i0;
        copy_typed(static_cast<const char*>(origin) + i0 * strides[ax] * static_cast<int64_t>(esize),
                   simplify(dims, strides, os, y.ndim), esize,
                   static_cast<char*>(out) + i0 * os[ax] * static_cast<int64_t>(esize));
    });
}

}  // namespace kern
}  // namespace accel_emu
