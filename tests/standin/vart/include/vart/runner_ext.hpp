// runner_ext.hpp - vart::RunnerExt (stand-in): a runner that owns HOST_PHY buffers for its tensors, the
// zero-copy path. Fill an input's host side, sync_for_write, execute_async with these buffers, then
// sync_for_read before reading an output (without the syncs the device or the host sees stale data).
// The buffers belong to the runner and die with it. Obtain with dynamic_cast from a vart::Runner.
#pragma once

#include <vector>

#include "vart/runner.hpp"
#include "vart/tensor_buffer.hpp"
#include "xir/util/standin_export.hpp"

namespace vart {

class XIR_STANDIN_API RunnerExt : public Runner {
  public:
    ~RunnerExt() override;
    virtual std::vector<vart::TensorBuffer*> get_inputs() = 0;
    virtual std::vector<vart::TensorBuffer*> get_outputs() = 0;
};

}  // namespace vart
