// runner.hpp - vart::Runner (stand-in): runs one subgraph of an xir::Graph. The rules of the vendor's
// DPU runner hold: execute_async BLOCKS until the job has run and wait() then returns 0 at once; a
// runner is not re-entrant (one job at a time per runner, one runner per thread); a wrong input (tensor
// count, dims, data type, a short buffer), a re-entrant call or a job running longer than
// XLNX_DPU_TIMEOUT seconds (default 10) ends the process with std::abort(), as UNI_LOG_CHECK does.
// Declarations as in VART 3.5's header (its classes, virtual functions in its order, its includes: the
// graph and its tensors are only declared here).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vart/tensor_buffer.hpp"

namespace xir {
class Subgraph;
class Attrs;
}  // namespace xir

namespace vart {

template <typename InputType, typename OutputType = InputType>
class BaseRunner {
  public:
    virtual ~BaseRunner() = default;
    virtual std::pair<std::uint32_t, int> execute_async(InputType input, OutputType output) = 0;
    virtual int wait(int jobid, int timeout = -1) = 0;
};

class Runner : public BaseRunner<const std::vector<TensorBuffer*>&> {
  public:
    // `subgraph` must be a DPU subgraph (attribute device == "DPU") of a graph that outlives the runner.
    // `mode` is "run" (or "", the same); the stand-in has no "ref" or "sim" runner.
    static std::unique_ptr<Runner> create_runner(const xir::Subgraph* subgraph,
                                                 const std::string& mode = std::string(""));
    // The stand-in reads no runner attributes and no model directories: these end the process.
    static std::unique_ptr<Runner> create_runner_with_attrs(const xir::Subgraph* subgraph, xir::Attrs* attrs);
    static std::vector<std::unique_ptr<Runner>> create_runner(const std::string& model_directory);

  public:
    // The layout of the runner's 4-D tensors. A real DPU's is NHWC; the stand-in's DPU runner reports
    // what its subgraph declares (FORMAT.md: "standin_tensor_format").
    enum class TensorFormat { NHWC = 0, NCHW };

  public:
    virtual ~Runner() = default;
    // Runs one job: inputs and outputs in the order of get_input_tensors()/get_output_tensors(), each
    // either this runner's own buffer (RunnerExt::get_inputs/get_outputs: no copy) or a HOST_VIRT buffer
    // of a tensor with the same name, dims and data type (or FLOAT for an xint tensor, converted with
    // fix_point), copied. Returns {job id, 0}; the job has finished when it returns.
    virtual std::pair<uint32_t, int> execute_async(const std::vector<TensorBuffer*>& input,
                                                   const std::vector<TensorBuffer*>& output) = 0;
    // The job has already finished (execute_async blocks): 0. No default timeout here, as in VART.
    virtual int wait(int jobid, int timeout) = 0;
    virtual TensorFormat get_tensor_format();
    virtual std::vector<const xir::Tensor*> get_input_tensors() = 0;
    virtual std::vector<const xir::Tensor*> get_output_tensors() = 0;
};

struct Meta {
    std::string target;
    std::string lib;
    std::string dirname;
};

struct DpuMeta : public Meta {
    std::string filename;
    std::vector<std::string> kernels;
    std::string config_file;
};

}  // namespace vart
