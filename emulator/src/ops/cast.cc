// cast.cc - cast (FORMAT.md op 26): every element converted to the output's dtype, between any two of
// the 11 dtypes (math/cast.cc says how); bitcast (op 91): the bytes kept, read as a dtype of the same size.
#include <algorithm>
#include <cstring>

#include "math/cast.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

using kern::no_scratch;

// Every dtype pair: check_common admits known dtypes only, and every pair has a loop.
bool validate_same_shape(const Graph& g, const Node& n, const char* op, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dims(x, y))
        return kern::fail(err, op,
                          cat("output shape ", kern::dims_str(y), " differs from input shape ", kern::dims_str(x)));
    return true;
}

bool validate_cast(const Graph& g, const Node& n, std::string* err) { return validate_same_shape(g, n, "cast", err); }

bool validate_bitcast(const Graph& g, const Node& n, std::string* err) {
    if (!validate_same_shape(g, n, "bitcast", err)) return false;
    const size_t x = dtype_size(kern::input(g, n, 0)->dtype), y = dtype_size(kern::output(g, n, 0).dtype);
    if (x != y) return kern::fail(err, "bitcast", kern::cat("element sizes differ: ", x, " and ", y, " bytes"));
    return true;
}

void run_bitcast(const KernelArgs& a) {
    if (a.in[0] != a.out[0]) std::memmove(a.out[0], a.in[0], kern::out_desc(a, 0).bytes);
}

// Runs of whole 64-element chunks across the core's threads (each element is converted alone).
void run_cast(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    constexpr int64_t kChunk = 64;
    const int64_t chunks = (xd.numel + kChunk - 1) / kChunk;
    const size_t sx = dtype_size(xd.dtype), sy = dtype_size(yd.dtype);
    a.par->for_ranges(chunks, split_parts(chunks, xd.numel, kMinElemsPerPart), [&](int64_t c0, int64_t c1, int) {
        const int64_t e0 = c0 * kChunk, e1 = std::min(xd.numel, c1 * kChunk);
        cast_elements(xd.dtype, yd.dtype, static_cast<const char*>(a.in[0]) + e0 * sx,
                      static_cast<char*>(a.out[0]) + e0 * sy, e1 - e0);
    });
}

}  // namespace

const OpDef kCastDef = {"cast", validate_cast, no_scratch, run_cast, nullptr, nullptr};
const OpDef kBitCastDef = {"bitcast", validate_bitcast, no_scratch, run_bitcast, nullptr, nullptr};

}  // namespace accel_emu
