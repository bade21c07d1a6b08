// runner.cc - vart::Runner's and RunnerExt's own functions other than the DPU runner's factory
// (dpu_runner.cc): the default tensor format, the factories the stand-in does not have (they end the process,
// as a missing runner plugin does in VART) and the fix-point scales.
#include <cmath>

#include "fatal.h"
#include "vart/runner_ext.hpp"
#include "xir/tensor/tensor.hpp"

namespace vart {

Runner::TensorFormat Runner::get_tensor_format() { return TensorFormat::NHWC; }

std::unique_ptr<Runner> Runner::create_runner_with_attrs(const xir::Subgraph*, xir::Attrs*) {
    standin_vart::fatal("create_runner_with_attrs: the stand-in reads no runner attributes; use create_runner");
}

std::vector<std::unique_ptr<Runner>> Runner::create_runner(const std::string& model_directory) {
    standin_vart::fatal("create_runner(\"%s\"): the stand-in reads no model directories; use create_runner(subgraph)",
                        model_directory.c_str());
}

std::unique_ptr<RunnerExt> RunnerExt::create_runner(const xir::Subgraph*, xir::Attrs*) {
    standin_vart::fatal(
        "RunnerExt::create_runner: the stand-in reads no runner attributes; use Runner::create_runner "
        "and dynamic_cast");
}

namespace {
int fix_point(const xir::Tensor* t) {
    if (!t || !t->has_attr("fix_point"))
        standin_vart::fatal("tensor %s has no fix_point", t ? t->get_name().c_str() : "(null)");
    return t->get_attr<int>("fix_point");
}
}  // namespace

float get_input_scale(const xir::Tensor* input_tensor) { return std::ldexp(1.0f, fix_point(input_tensor)); }
float get_output_scale(const xir::Tensor* output_tensor) { return std::ldexp(1.0f, -fix_point(output_tensor)); }

std::vector<float> get_input_scale(std::vector<const xir::Tensor*> input_tensors) {
    std::vector<float> out;
    for (const xir::Tensor* t : input_tensors) out.push_back(get_input_scale(t));
    return out;
}

std::vector<float> get_output_scale(std::vector<const xir::Tensor*> output_tensors) {
    std::vector<float> out;
    for (const xir::Tensor* t : output_tensors) out.push_back(get_output_scale(t));
    return out;
}

}  // namespace vart
