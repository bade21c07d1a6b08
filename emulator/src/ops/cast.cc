// cast.cc - cast (FORMAT.md op 26): every element converted to the output's dtype, between any two of
// the 11 dtypes (math/cast.cc says how); bitcast (op 91): the bytes kept, read as a dtype of the same size.
#include <cstring>

#include "math/cast.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

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

void run_cast(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    cast_elements(xd.dtype, yd.dtype, a.in[0], a.out[0], xd.numel);
}

}  // namespace

const OpDef kCastDef = {"cast", validate_cast, no_scratch, run_cast, nullptr, nullptr};
const OpDef kBitCastDef = {"bitcast", validate_bitcast, no_scratch, run_bitcast, nullptr, nullptr};

}  // namespace accel_emu
