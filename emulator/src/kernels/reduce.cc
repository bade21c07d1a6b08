// reduce.cc - placeholder: the op is being written (refused at load until then).
#include "op_defs.h"

namespace accel_emu {
namespace {

size_t no_scratch(const Graph&, const Node&) { return 0; }
void no_run(const KernelArgs&) {}

bool validate_reduce(const Graph&, const Node&, std::string* err) {
    *err = "op 'reduce' is not implemented yet";
    return false;
}

}  // namespace

const OpDef kReduceDef = {"reduce", validate_reduce, no_scratch, no_run, nullptr, nullptr};

}  // namespace accel_emu
