// runner.hpp - vart::Runner (stand-in): runs one subgraph of an xir::Graph. The rules of the vendor's
// DPU runner hold: execute_async BLOCKS until the job has run and wait() then returns 0 at once; a
// runner is not re-entrant (one job at a time per runner, one runner per thread); a wrong input (tensor
// count, dims, data type, a short buffer), a re-entrant call or a job running longer than
// XLNX_DPU_TIMEOUT seconds (default 10) ends the process with std::abort(), as UNI_LOG_CHECK does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vart/tensor_buffer.hpp"
#include "xir/graph/subgraph.hpp"
#include "xir/tensor/tensor.hpp"
#include "xir/util/standin_export.hpp"

namespace vart {

class XIR_STANDIN_API Runner {
  public:
    // `subgraph` must be a DPU subgraph (attribute device == "DPU") of a graph that outlives the runner.
    // `mode` is "run" (or "", the same); the stand-in has no "ref" or "sim" runner.
    static std::unique_ptr<Runner> create_runner(const xir::Subgraph* subgraph, const std::string& mode = "");

    virtual ~Runner();

    // Runs one job: inputs and outputs in the order of get_input_tensors()/get_output_tensors(), each
    // either this runner's own buffer (RunnerExt::get_inputs/get_outputs: no copy) or a HOST_VIRT buffer
    // of a tensor with the same name, dims and data type (or FLOAT for an xint tensor, converted with
    // fix_point), copied.
    // Returns {job id, 0}; the job has finished when it returns.
    virtual std::pair<std::uint32_t, int> execute_async(const std::vector<TensorBuffer*>& input,
                                                        const std::vector<TensorBuffer*>& output) = 0;
    // The job has already finished (execute_async blocks): 0.
    virtual int wait(int jobid, int timeout = -1) = 0;

    // The layout of the runner's 4-D tensors. A real DPU's is NHWC; the stand-in's DPU runner reports
    // what its subgraph declares (FORMAT.md: "standin_tensor_format").
    enum class TensorFormat { NHWC = 0, NCHW };
    virtual TensorFormat get_tensor_format();

    virtual std::vector<const xir::Tensor*> get_input_tensors() = 0;
    virtual std::vector<const xir::Tensor*> get_output_tensors() = 0;
};

}  // namespace vart
