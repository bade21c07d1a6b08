// convtranspose.cc - placeholder: the op is being written (refused at load until then).
#include "op_defs.h"

namespace accel_emu {
namespace {

size_t no_scratch(const Graph&, const Node&) { return 0; }
void no_run(const KernelArgs&) {}

bool validate_convtranspose(const Graph&, const Node&, std::string* err) {
    *err = "op 'convtranspose' is not implemented yet";
    return false;
}

}  // namespace

const OpDef kConvTransposeDef = {"convtranspose", validate_convtranspose, no_scratch, no_run, nullptr, nullptr};

}  // namespace accel_emu
