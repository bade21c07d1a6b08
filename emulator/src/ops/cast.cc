// cast.cc - cast (FORMAT.md op 26): every element converted to the output's dtype, between any two of
// the 11 dtypes (math/cast.cc says how).
#include "math/cast.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

size_t no_scratch(const Graph&, const Node&) { return 0; }

bool validate_cast(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "cast";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dims(x, y))
        return kern::fail(err, op,
                          cat("output shape ", kern::dims_str(y), " differs from input shape ", kern::dims_str(x)));
    return true;  // check_common admits known dtypes only: every pair has a loop
}

void run_cast(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    cast_elements(xd.dtype, yd.dtype, a.in[0], a.out[0], xd.numel);
}

}  // namespace

const OpDef kCastDef = {"cast", validate_cast, no_scratch, run_cast, nullptr, nullptr};

}  // namespace accel_emu
