// runner_ext.hpp - vart::RunnerExt (stand-in): a runner that owns HOST_PHY buffers for its tensors, the
// zero-copy path. Fill an input's host side, sync_for_write, execute_async with these buffers, then
// sync_for_read before reading an output (without the syncs the device or the host sees stale data).
// The buffers belong to the runner and die with it. Obtain with dynamic_cast from a vart::Runner.
#pragma once

#include <vart/runner.hpp>

namespace vart {

class RunnerExt : public vart::Runner {
  public:
    explicit RunnerExt() = default;
    RunnerExt(const RunnerExt&) = delete;
    RunnerExt& operator=(const RunnerExt& other) = delete;
    virtual ~RunnerExt() = default;

    // The stand-in reads no runner attributes: this ends the process (use Runner::create_runner).
    static std::unique_ptr<RunnerExt> create_runner(const xir::Subgraph* subgraph, xir::Attrs* attrs);

  public:
    virtual std::vector<vart::TensorBuffer*> get_inputs() = 0;
    virtual std::vector<vart::TensorBuffer*> get_outputs() = 0;
};

// What multiplies a float to give a tensor's fixed-point value (inputs: 2^fix_point) and what multiplies
// the fixed-point value to give the float (outputs: 2^-fix_point).
std::vector<float> get_input_scale(std::vector<const xir::Tensor*> input_tensors);
std::vector<float> get_output_scale(std::vector<const xir::Tensor*> output_tensors);
float get_input_scale(const xir::Tensor* input_tensor);
float get_output_scale(const xir::Tensor* output_tensor);

}  // namespace vart
