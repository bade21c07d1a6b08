// slice.cc - placeholder: the op is being written (refused at load until then).
#include "op_defs.h"

namespace accel_emu {
namespace {

size_t no_scratch(const Graph&, const Node&) { return 0; }
void no_run(const KernelArgs&) {}

bool validate_slice(const Graph&, const Node&, std::string* err) {
    *err = "op 'slice' is not implemented yet";
    return false;
}

bool validate_gather(const Graph&, const Node&, std::string* err) {
    *err = "op 'gather' is not implemented yet";
    return false;
}

bool validate_expand(const Graph&, const Node&, std::string* err) {
    *err = "op 'expand' is not implemented yet";
    return false;
}

}  // namespace

const OpDef kSliceDef = {"slice", validate_slice, no_scratch, no_run, nullptr, nullptr};
const OpDef kGatherDef = {"gather", validate_gather, no_scratch, no_run, nullptr, nullptr};
const OpDef kExpandDef = {"expand", validate_expand, no_scratch, no_run, nullptr, nullptr};

}  // namespace accel_emu
