// col2im_op.cc - ONNX Col2Im (FORMAT.md op 77, minor 6): blocks of columns summed back into an image of 1 to 3
// spatial dims, float32, in onnxruntime's order (channel, block offset, block position) so that overlapping
// sums round as its do. (math/col2im.cc is convtranspose's 2-D helper, not this op.)
#include <cstring>

#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

using kern::cat;

constexpr int kMaxSpatial = 3;

using kern::no_scratch;

// The block grid per spatial dim (out[d] positions), or false when a dim has none.
bool block_grid(const TensorDesc& y, const Col2ImParams& p, int64_t* out) {
    for (int d = 0; d < y.ndim - 2; ++d) {
        const int64_t span = p.dilation[d] * (p.block[d] - 1) + 1;
        const int64_t room = y.dims[2 + d] + p.pad_begin[d] + p.pad_end[d] - span;
        if (room < 0) return false;
        out[d] = room / p.stride[d] + 1;
    }
    return true;
}

bool validate_col2im(const Graph& g, const Node& n, std::string* err) {
    const char* op = "col2im";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    const Col2ImParams p = Col2ImParams::of(n);
    const int s = y.ndim - 2;
    if (s < 1 || s > kMaxSpatial) return kern::fail(err, op, cat("output rank ", y.ndim, " is not 3 to 5"));
    if (x.ndim != 3 || x.dims[0] != y.dims[0])
        return kern::fail(err, op,
                          cat("input ", kern::dims_str(x), " is not [N, C*K, L] for output ", kern::dims_str(y)));
    int64_t blocks = 1, grid[kMaxSpatial], positions = 1;
    for (int d = 0; d < kMaxSpatial; ++d) {
        if (d >= s) {
            if (p.block[d] || p.stride[d] || p.dilation[d] || p.pad_begin[d] || p.pad_end[d])
                return kern::fail(err, op, cat("parameters of spatial dim ", d, " must be 0: there are ", s));
            continue;
        }
        if (p.block[d] < 1 || p.stride[d] < 1 || p.dilation[d] < 1 || p.pad_begin[d] < 0 || p.pad_end[d] < 0 ||
            p.block[d] > (int64_t(1) << 20) || p.dilation[d] > (int64_t(1) << 20) || p.stride[d] > y.dims[2 + d] ||
            p.pad_begin[d] > y.dims[2 + d] || p.pad_end[d] > y.dims[2 + d])
            return kern::fail(err, op,
                              cat("spatial dim ", d, ": block ", p.block[d], ", stride ", p.stride[d], ", dilation ",
                                  p.dilation[d], ", pads ", p.pad_begin[d], " and ", p.pad_end[d], " out of range"));
        blocks *= p.block[d];
    }
    if (!block_grid(y, p, grid)) return kern::fail(err, op, "a block is larger than the padded image");
    for (int d = 0; d < s; ++d) positions *= grid[d];
    if (x.dims[1] != y.dims[1] * blocks || x.dims[2] != positions)
        return kern::fail(err, op,
                          cat("input ", kern::dims_str(x), " is not [", y.dims[0], ", ", y.dims[1] * blocks, ", ",
                              positions, "] (C*K, L) for output ", kern::dims_str(y)));
    return true;
}

void run_col2im(const KernelArgs& a) {
    const TensorDesc& yd = kern::out_desc(a, 0);
    const Col2ImParams p = Col2ImParams::of(*a.node);
    const int s = yd.ndim - 2;
    int64_t grid[kMaxSpatial] = {1, 1, 1}, block[kMaxSpatial] = {1, 1, 1}, img[kMaxSpatial] = {1, 1, 1};
    block_grid(yd, p, grid);
    int64_t K = 1, L = 1, image = 1;
    for (int d = 0; d < s; ++d) {
        block[d] = p.block[d];
        img[d] = yd.dims[2 + d];
        K *= block[d];
        L *= grid[d];
        image *= img[d];
    }
    const float* x = kern::in_f(a, 0);
    float* y = kern::out_f(a, 0);
    std::memset(y, 0, static_cast<size_t>(yd.numel) * sizeof(float));
    const int64_t planes = yd.dims[0] * yd.dims[1];
    for (int64_t pc = 0; pc < planes; ++pc, y += image) {
        for (int64_t k = 0; k < K; ++k, x += L) {
            int64_t kd[kMaxSpatial] = {0, 0, 0};  // k in C order over the block's dims
            for (int64_t d = s - 1, rest = k; d >= 0; --d) {
                kd[d] = rest % block[d];
                rest /= block[d];
            }
            int64_t l = 0;
            for (int64_t l0 = 0; l0 < grid[0]; ++l0) {
                const int64_t p0 = l0 * p.stride[0] - p.pad_begin[0] + kd[0] * p.dilation[0];
                for (int64_t l1 = 0; l1 < grid[1]; ++l1) {
                    const int64_t p1 = s > 1 ? l1 * p.stride[1] - p.pad_begin[1] + kd[1] * p.dilation[1] : 0;
                    for (int64_t l2 = 0; l2 < grid[2]; ++l2, ++l) {
                        const int64_t p2 = s > 2 ? l2 * p.stride[2] - p.pad_begin[2] + kd[2] * p.dilation[2] : 0;
                        if (p0 < 0 || p0 >= img[0] || p1 < 0 || p1 >= img[1] || p2 < 0 || p2 >= img[2]) continue;
                        y[(p0 * img[1] + p1) * img[2] + p2] += x[l];
                    }
                }
            }
        }
    }
}

}  // namespace

const OpDef kCol2ImDef = {"col2im", validate_col2im, no_scratch, run_col2im, nullptr, nullptr};

}  // namespace accel_emu
