// dpu_runner.cc - the stand-in's DPU runner: vart::Runner::create_runner and a RunnerExt that runs a
// DPU subgraph's emulator model (its "standin_accm" attribute, in place of the DPU's code) on accel's
// emulator, with the vendor runner's rules (runner.hpp): tensors in the subgraph's sorted order, blocking
// execute_async, no re-entry, and std::abort() on any misuse.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "convert.h"
#include "emulator.h"
#include "fatal.h"
#include "host_phy_buffer.h"
#include "vart/runner_ext.hpp"
#include "xir/graph/subgraph.hpp"
#include "xir/tensor/tensor.hpp"

namespace standin_vart {
namespace {

// XLNX_DPU_TIMEOUT: seconds a job may take before the runtime gives up on the DPU (and the process).
unsigned long long dpu_timeout_ns() {
    const char* env = std::getenv("XLNX_DPU_TIMEOUT");
    long seconds = env && *env ? std::strtol(env, nullptr, 10) : 10;
    if (seconds <= 0) seconds = 10;
    return (unsigned long long)seconds * 1000000000ull;
}

// What the subgraph declares in its stand-in attribute "standin_tensor_format" ("NHWC", the default
// and what a real DPU has, or "NCHW": a stand-in liberty for running NCHW models as they are).
vart::Runner::TensorFormat declared_format(const xir::Subgraph* subgraph) {
    if (!subgraph->has_attr("standin_tensor_format")) return vart::Runner::TensorFormat::NHWC;
    const std::string format = subgraph->get_attr<std::string>("standin_tensor_format");
    if (format == "NHWC") return vart::Runner::TensorFormat::NHWC;
    if (format == "NCHW") return vart::Runner::TensorFormat::NCHW;
    fatal("create_runner: subgraph %s: standin_tensor_format \"%s\" is neither NHWC nor NCHW",
          subgraph->get_name().c_str(), format.c_str());
}

// One side of a run: the tensor the runner expects and the bytes it reads from or writes to.
struct Port {
    DpuTensor dpu;
    std::unique_ptr<HostPhyBuffer> own;  // the runner's HOST_PHY buffer
    accel_buffer* emulated = nullptr;    // the emulator model's tensor
    size_t slot = 0;                     // its index among the emulator model's inputs or outputs
    // The emulator model's tensor holds the DPU's 8-bit integers as stored (a model compiled from the file's own
    // DPU ops), not float32 values: the bytes pass as they are.
    bool integers = false;
};

class DpuRunner : public vart::RunnerExt {
public:
    explicit DpuRunner(const xir::Subgraph* subgraph);
    ~DpuRunner() override;

    std::pair<std::uint32_t, int> execute_async(const std::vector<vart::TensorBuffer*>& input,
                                                const std::vector<vart::TensorBuffer*>& output) override;
    int wait(int, int) override { return 0; }
    TensorFormat get_tensor_format() override { return format_; }
    std::vector<const xir::Tensor*> get_input_tensors() override { return tensors(inputs_); }
    std::vector<const xir::Tensor*> get_output_tensors() override { return tensors(outputs_); }
    std::vector<vart::TensorBuffer*> get_inputs() override { return buffers(inputs_); }
    std::vector<vart::TensorBuffer*> get_outputs() override { return buffers(outputs_); }

private:
    static std::vector<const xir::Tensor*> tensors(const std::vector<Port>& ports) {
        std::vector<const xir::Tensor*> out;
        for (const Port& p : ports) out.push_back(p.dpu.tensor);
        return out;
    }
    static std::vector<vart::TensorBuffer*> buffers(const std::vector<Port>& ports) {
        std::vector<vart::TensorBuffer*> out;
        for (const Port& p : ports) out.push_back(p.own.get());
        return out;
    }
    void make_ports(const std::vector<const xir::Tensor*>& ts, bool inputs, std::vector<Port>& ports);
    vart::TensorBuffer* match(const std::vector<vart::TensorBuffer*>& given, size_t index, const Port& port,
                              const char* kind);
    void read_input(vart::TensorBuffer* given, Port& port);
    void write_output(vart::TensorBuffer* given, Port& port);
    void run_emulated();

    std::string name_;
    TensorFormat format_ = TensorFormat::NHWC;
    accel_device* device_ = nullptr;
    accel_model* model_ = nullptr;
    std::vector<Port> inputs_, outputs_;
    std::atomic<bool> busy_{false};
    std::atomic<std::uint32_t> next_job_{1};
};

DpuRunner::DpuRunner(const xir::Subgraph* subgraph) : name_(subgraph->get_name()) {
    if (!subgraph->has_attr("device") || subgraph->get_attr<std::string>("device") != "DPU")
        fatal("create_runner: subgraph %s is not a DPU subgraph", name_.c_str());
    if (!subgraph->has_attr("standin_accm")) fatal("create_runner: DPU subgraph %s has no code", name_.c_str());
    const std::vector<char> code = subgraph->get_attr<std::vector<char>>("standin_accm");
    format_ = declared_format(subgraph);
    device_ = acquire_emulator();
    if (!device_) fatal("create_runner: cannot open the DPU (the emulator): %s", accel_last_error_message());
    if (accel_model_load_memory(device_, code.data(), code.size(), &model_) != ACCEL_OK)
        fatal("create_runner: subgraph %s: %s", name_.c_str(), accel_last_error_message());
    size_t nin = 0, nout = 0;
    accel_model_input_count(model_, &nin);
    accel_model_output_count(model_, &nout);
    const std::vector<const xir::Tensor*> ins = subgraph->get_sorted_input_tensors();
    const std::vector<const xir::Tensor*> outs = subgraph->get_sorted_output_tensors();
    if (nin != ins.size() || nout != outs.size())
        fatal("create_runner: subgraph %s: its code has %zu inputs and %zu outputs, its tensors %zu and %zu",
              name_.c_str(), nin, nout, ins.size(), outs.size());
    make_ports(ins, true, inputs_);
    make_ports(outs, false, outputs_);
    for (const auto* ports : {&inputs_, &outputs_})
        for (const Port& p : *ports)
            if (format_ == TensorFormat::NCHW && p.dpu.nchw)
                fatal("create_runner: subgraph %s is NCHW, its tensor %s says standin_nchw", name_.c_str(),
                      p.dpu.tensor->get_name().c_str());
}

// One port per tensor, in the subgraph's (name) order; each runs the emulator model's tensor of its name.
void DpuRunner::make_ports(const std::vector<const xir::Tensor*>& ts, bool inputs, std::vector<Port>& ports) {
    for (const xir::Tensor* t : ts) {
        Port p{dpu_view(t), std::make_unique<HostPhyBuffer>(t), nullptr, ts.size()};
        for (size_t i = 0; i < ts.size(); i++) {
            accel_tensor_info info;
            std::memset(&info, 0, sizeof info);
            info.struct_size = sizeof info;
            if ((inputs ? accel_model_input_info : accel_model_output_info)(model_, i, &info) != ACCEL_OK)
                fatal("create_runner: subgraph %s: %s", name_.c_str(), accel_last_error_message());
            if (!info.name || t->get_name() != info.name) continue;
            p.slot = i;
            p.integers = info.dtype == ACCEL_DTYPE_INT8 || info.dtype == ACCEL_DTYPE_UINT8;
            const bool xint = p.dpu.kind == (info.dtype == ACCEL_DTYPE_INT8 ? DpuTensor::XINT8 : DpuTensor::XUINT8);
            if (p.integers && (!xint || p.dpu.nchw))
                fatal("create_runner: subgraph %s: tensor %s is %s%s, its code's %s", name_.c_str(),
                      t->get_name().c_str(), t->get_data_type().to_string().c_str(), p.dpu.nchw ? " (NCHW)" : "",
                      info.dtype == ACCEL_DTYPE_INT8 ? "int8" : "uint8");
            if (!p.integers && info.dtype != ACCEL_DTYPE_FLOAT32)
                fatal("create_runner: subgraph %s: its code's tensor %s is neither float32 nor 8-bit", name_.c_str(),
                      t->get_name().c_str());
            int64_t elements = 1;
            for (uint32_t d = 0; d < info.ndim; d++) elements *= info.shape[d];
            if (elements != t->get_element_num())
                fatal("create_runner: subgraph %s: tensor %s has %lld elements, its code's %lld", name_.c_str(),
                      t->get_name().c_str(), (long long)t->get_element_num(), (long long)elements);
        }
        if (p.slot == ts.size())
            fatal("create_runner: subgraph %s: its code has no %s named %s", name_.c_str(), inputs ? "input" : "output",
                  t->get_name().c_str());
        const uint64_t bytes = (uint64_t)t->get_element_num() * (p.integers ? 1 : sizeof(float));
        if (accel_buffer_alloc(device_, bytes, &p.emulated) != ACCEL_OK)
            fatal("create_runner: no DPU memory for %s", t->get_name().c_str());
        ports.push_back(std::move(p));
    }
}

DpuRunner::~DpuRunner() {
    for (Port& p : inputs_) accel_buffer_release(p.emulated);
    for (Port& p : outputs_) accel_buffer_release(p.emulated);
    accel_model_release(model_);
    release_emulator();
}

// The buffer for runner tensor `index`: the one at that position if it is the runner's own, else the
// HOST_VIRT buffer whose tensor name contains the runner tensor's name (the vendor matches by name).
vart::TensorBuffer* DpuRunner::match(const std::vector<vart::TensorBuffer*>& given, size_t index, const Port& port,
                                     const char* kind) {
    const std::string& want = port.dpu.tensor->get_name();
    if (given[index] == port.own.get()) return given[index];
    vart::TensorBuffer* found = nullptr;
    for (vart::TensorBuffer* b : given) {
        if (!b) fatal("execute_async: a null %s buffer", kind);
        if (b->get_location() != vart::TensorBuffer::location_t::HOST_VIRT || !b->get_tensor()) continue;
        const std::string name = b->get_tensor()->get_name();
        if (name == want) {
            found = b;
            break;
        }
        if (!found && name.find(want) != std::string::npos) found = b;
    }
    if (!found) fatal("execute_async: no %s buffer for tensor %s (HOST_VIRT, matched by name)", kind, want.c_str());
    const xir::Tensor* t = found->get_tensor();
    if (t->get_shape() != port.dpu.tensor->get_shape())
        fatal("execute_async: %s tensor %s: wrong dims", kind, want.c_str());
    const xir::DataType& dt = t->get_data_type();
    const bool as_float = dt == xir::DataType(xir::DataType::FLOAT, 32);  // converted with fix_point if xint
    if (dt != port.dpu.tensor->get_data_type() && !(as_float && port.dpu.kind != DpuTensor::FLOAT32))
        fatal("execute_async: %s tensor %s: wrong data type %s (expected %s%s)", kind, want.c_str(),
              dt.to_string().c_str(), port.dpu.tensor->get_data_type().to_string().c_str(),
              port.dpu.kind == DpuTensor::FLOAT32 ? "" : " or float32");
    const size_t need = (size_t)t->get_data_size();
    if (found->data({}).second < need)
        fatal("execute_async: %s tensor %s: buffer of %zu bytes, %zu needed", kind, want.c_str(),
              found->data({}).second, need);
    return found;
}

void DpuRunner::read_input(vart::TensorBuffer* given, Port& port) {
    void* emulated = nullptr;
    accel_buffer_host_ptr(port.emulated, &emulated);
    if (port.integers) {
        const size_t n = (size_t)port.dpu.tensor->get_element_num();
        auto* q = static_cast<std::uint8_t*>(emulated);
        if (given == port.own.get()) return (void)std::memcpy(q, port.own->device_side(), n);
        const auto* src = reinterpret_cast<const std::uint8_t*>((std::uintptr_t)given->data({}).first);
        if (given->get_tensor()->get_data_type() == port.dpu.tensor->get_data_type())
            return (void)std::memcpy(q, src, n);
        return float_to_xint_truncating(port.dpu, reinterpret_cast<const float*>(src), q);
    }
    float* dst = static_cast<float*>(emulated);
    if (given == port.own.get()) return to_float(port.dpu, port.own->device_side(), dst);
    const auto* src = reinterpret_cast<const std::uint8_t*>((std::uintptr_t)given->data({}).first);
    if (given->get_tensor()->get_data_type() == port.dpu.tensor->get_data_type()) return to_float(port.dpu, src, dst);
    std::vector<std::uint8_t> q((size_t)port.dpu.tensor->get_element_num());
    float_to_xint_truncating(port.dpu, reinterpret_cast<const float*>(src), q.data());
    to_float(port.dpu, q.data(), dst);
}

void DpuRunner::write_output(vart::TensorBuffer* given, Port& port) {
    void* emulated = nullptr;
    accel_buffer_host_ptr(port.emulated, &emulated);
    if (port.integers) {
        const size_t n = (size_t)port.dpu.tensor->get_element_num();
        const auto* q = static_cast<const std::uint8_t*>(emulated);
        if (given == port.own.get()) return (void)std::memcpy(port.own->device_side(), q, n);
        auto* dst = reinterpret_cast<std::uint8_t*>((std::uintptr_t)given->data({}).first);
        if (given->get_tensor()->get_data_type() == port.dpu.tensor->get_data_type())
            return (void)std::memcpy(dst, q, n);
        return xint_to_float(port.dpu, q, reinterpret_cast<float*>(dst));
    }
    const float* src = static_cast<const float*>(emulated);
    if (given == port.own.get()) return from_float(port.dpu, src, port.own->device_side());
    auto* dst = reinterpret_cast<std::uint8_t*>((std::uintptr_t)given->data({}).first);
    if (given->get_tensor()->get_data_type() == port.dpu.tensor->get_data_type()) return from_float(port.dpu, src, dst);
    std::vector<std::uint8_t> q((size_t)port.dpu.tensor->get_element_num());
    from_float(port.dpu, src, q.data());
    xint_to_float(port.dpu, q.data(), reinterpret_cast<float*>(dst));
}

void DpuRunner::run_emulated() {
    const unsigned long long deadline = now_ns() + dpu_timeout_ns();
    if (!wait_while_held(deadline)) fatal("DPU timeout: subgraph %s did not finish (XLNX_DPU_TIMEOUT)", name_.c_str());
    std::vector<accel_buffer*> in(inputs_.size()), out(outputs_.size());
    for (Port& p : inputs_) in[p.slot] = p.emulated;
    for (Port& p : outputs_) out[p.slot] = p.emulated;
    accel_job* job = nullptr;
    if (accel_job_submit(model_, in.data(), in.size(), out.data(), out.size(), nullptr, &job) != ACCEL_OK)
        fatal("DPU: subgraph %s: %s", name_.c_str(), accel_last_error_message());
    unsigned long long now = now_ns();
    accel_status st = accel_job_wait(job, now < deadline ? (int64_t)((deadline - now) / 1000) : 0);
    if (st == ACCEL_ERR_NOT_READY) fatal("DPU timeout: subgraph %s did not finish (XLNX_DPU_TIMEOUT)", name_.c_str());
    if (st != ACCEL_OK) fatal("DPU: subgraph %s: %s", name_.c_str(), accel_last_error_message());
    accel_job_release(job);
}

std::pair<std::uint32_t, int> DpuRunner::execute_async(const std::vector<vart::TensorBuffer*>& input,
                                                       const std::vector<vart::TensorBuffer*>& output) {
    if (busy_.exchange(true)) fatal("execute_async: runner of subgraph %s is already running a job", name_.c_str());
    count_running(1);
    if (input.size() != inputs_.size() || output.size() != outputs_.size())
        fatal("execute_async: %zu inputs and %zu outputs given, subgraph %s has %zu and %zu", input.size(),
              output.size(), name_.c_str(), inputs_.size(), outputs_.size());
    std::vector<vart::TensorBuffer*> in(inputs_.size()), out(outputs_.size());
    for (size_t i = 0; i < inputs_.size(); i++) in[i] = match(input, i, inputs_[i], "input");
    for (size_t i = 0; i < outputs_.size(); i++) out[i] = match(output, i, outputs_[i], "output");
    for (size_t i = 0; i < inputs_.size(); i++) read_input(in[i], inputs_[i]);
    run_emulated();
    for (size_t i = 0; i < outputs_.size(); i++) write_output(out[i], outputs_[i]);
    count_running(-1);
    busy_.store(false);
    return {next_job_.fetch_add(1), 0};
}

}  // namespace
}  // namespace standin_vart

namespace vart {

std::unique_ptr<Runner> Runner::create_runner(const xir::Subgraph* subgraph, const std::string& mode) {
    if (!subgraph) standin_vart::fatal("create_runner: null subgraph");
    if (!mode.empty() && mode != "run")
        standin_vart::fatal("create_runner: mode \"%s\" is not available", mode.c_str());
    return std::make_unique<standin_vart::DpuRunner>(subgraph);
}

}  // namespace vart
