// minmax_pow.cc - placeholder: the op is being written (refused at load until then).
#include "op_defs.h"

namespace accel_emu {
namespace {

size_t no_scratch(const Graph&, const Node&) { return 0; }
void no_run(const KernelArgs&) {}

bool validate_pow(const Graph&, const Node&, std::string* err) {
    *err = "op 'pow' is not implemented yet";
    return false;
}

bool validate_min(const Graph&, const Node&, std::string* err) {
    *err = "op 'min' is not implemented yet";
    return false;
}

bool validate_max(const Graph&, const Node&, std::string* err) {
    *err = "op 'max' is not implemented yet";
    return false;
}

}  // namespace

const OpDef kPowDef = {"pow", validate_pow, no_scratch, no_run, nullptr, nullptr};
const OpDef kMinDef = {"min", validate_min, no_scratch, no_run, nullptr, nullptr};
const OpDef kMaxDef = {"max", validate_max, no_scratch, no_run, nullptr, nullptr};

}  // namespace accel_emu
