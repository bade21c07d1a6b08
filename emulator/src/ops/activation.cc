// activation.cc - the activation op (FORMAT.md op 8): the node's activation field is the function,
// applied from the input to the output (math/activation.cc).
#include "math/activation.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

bool validate_act(const Graph& g, const Node& n, std::string* err) {
    const char* op = "activation";
    if (!kern::check_common(g, n, op, {1, 1, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::Function, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    return kern::check_same_shape(x, y, op, err);
}

size_t no_scratch(const Graph&, const Node&) { return 0; }

void run_act(const KernelArgs& a) {
    const Node& n = *a.node;
    activation_map(n.act, n.act_alpha, n.act_beta, kern::in_f(a, 0), kern::out_f(a, 0),
                   static_cast<size_t>(kern::out_desc(a, 0).numel));
}

}  // namespace

const OpDef kActivationDef = {"activation", validate_act, no_scratch, run_act, nullptr, nullptr};

}  // namespace accel_emu
