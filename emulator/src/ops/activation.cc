// activation.cc - the activation op (FORMAT.md op 8): the node's activation field is the function,
// applied from the input to the output (math/activation.cc).
#include <algorithm>

#include "math/activation.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

bool validate_act(const Graph& g, const Node& n, std::string* err) {
    const char* op = "activation";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    return kern::check_same_shape(x, y, op, err);
}

using kern::no_scratch;

// Runs of whole 64-float chunks (the last run takes the rest), so every run starts 256-byte aligned.
void run_act(const KernelArgs& a) {
    const Node& n = *a.node;
    constexpr int64_t kChunk = 64;
    const int64_t numel = kern::out_desc(a, 0).numel, chunks = (numel + kChunk - 1) / kChunk;
    const int64_t parts = split_parts(chunks, numel, kMinElemsPerPart);
    const float* x = kern::in_f(a, 0);
    float* y = kern::out_f(a, 0);
    a.par->for_ranges(chunks, parts, [&](int64_t c0, int64_t c1, int) {
        const int64_t e0 = c0 * kChunk, e1 = std::min(numel, c1 * kChunk);
        activation_map(n.act, n.act_alpha, n.act_beta, x + e0, y + e0, static_cast<size_t>(e1 - e0));
    });
}

}  // namespace

const OpDef kActivationDef = {"activation", validate_act, no_scratch, run_act, nullptr, nullptr};

}  // namespace accel_emu
