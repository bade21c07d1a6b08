// dnn.cc - the stand-in's S100 hbDNN* API: models from its .hbm files; hbDNNInferV2 makes hbUCP tasks
// (ucp.cc starts them) after checking the user's tensors against the model, dynamic strides included.
#include <vector>

#include "device_memory.h"
#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "model_file.h"
#include "runtime.h"

namespace standin {
namespace ucp {
namespace {

// hbDNNInferV2 without a task pointer: a task of its own, run with the default scheduling and waited for.
int32_t infer_sync(hbDNNTensor* output, const hbDNNTensor* input, hbDNNHandle_t h) {
    hbUCPTaskHandle_t task = nullptr;
    int32_t status = hbDNNInferV2(&task, output, input, h);
    if (status != HB_DNN_SUCCESS) return status;
    hbUCPSchedParam sched;
    HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
    status = hbUCPSubmitTask(task, &sched);
    if (status == HB_UCP_SUCCESS) status = hbUCPWaitTaskDone(task, 0);
    hbUCPReleaseTask(task);
    return status;
}

using VendorModel = UcpModel;
constexpr int32_t kNoDeviceStatus = HB_UCP_INIT_FAILED;

}  // namespace
}  // namespace ucp
}  // namespace standin

using namespace standin;
using namespace standin::ucp;

#include "hb_model_api.inc"

namespace {

// The layout the user's tensor gives for the model's `expected` one into `out`, or false if the BPU
// could not run it: another type or shape, a static stride changed, a dynamic one left at -1 or
// overlapping, memory smaller than the strides reach.
bool given_layout(const hbDNNTensor& given, const UcpTensor& expected, const TensorDesc& desc, TensorDesc& out) {
    const hbDNNTensorProperties& p = given.properties;
    if (p.tensorType != expected.props.tensorType || !same_shape(p.validShape, expected.props.validShape)) return false;
    out = desc;
    for (int i = 0; i < desc.ndim; i++) {
        if (expected.props.stride[i] == -1) out.strides[i] = p.stride[i];
        else if (p.stride[i] != expected.props.stride[i]) return false;
    }
    if (expected.dynamic) {
        if (!strides_valid(out)) return false;
        out.byte_size = span_bytes(out);
    }
    return given.sysMem.memSize >= (uint64_t)out.byte_size &&
           device_bytes(given.sysMem.phyAddr, (uint64_t)out.byte_size) != nullptr;
}

}  // namespace

extern "C" {

const char* hbDNNGetVersion(void) { return "3.x (accel stand-in)"; }

int32_t hbDNNInferV2(hbUCPTaskHandle_t* task_handle, hbDNNTensor* output, hbDNNTensor const* input, hbDNNHandle_t h) {
    STANDIN_MODEL(h);
    if (!output || !input) return HB_DNN_INVALID_ARGUMENT;
    if (!task_handle) return infer_sync(output, input, h);
    std::vector<TensorDesc> in(model->inputs.size()), out(model->outputs.size());
    std::vector<uint64_t> in_phy, out_phy;
    for (size_t i = 0; i < in.size(); i++) {
        if (!given_layout(input[i], model->vendor_inputs[i], model->inputs[i], in[i])) return HB_DNN_INVALID_ARGUMENT;
        in_phy.push_back(input[i].sysMem.phyAddr);
    }
    for (size_t i = 0; i < out.size(); i++) {
        if (!given_layout(output[i], model->vendor_outputs[i], model->outputs[i], out[i]))
            return HB_DNN_INVALID_ARGUMENT;
        out_phy.push_back(output[i].sysMem.phyAddr);
    }
    Task* task = nullptr;
    const bool fresh = *task_handle == nullptr;
    if (fresh) {
        if (engine().create_task(&task) != Result::Ok) return HB_DNN_TASK_NUM_EXCEED_LIMIT;
    } else {
        task = engine().known_task(*task_handle);
        if (!task) return HB_DNN_INVALID_TASK_HANDLE;
        if (engine().submitted(task)) return HB_DNN_API_USE_ERROR;  // only a task not submitted takes more
    }
    if (engine().add_part(task, model, std::move(in), in_phy.data(), std::move(out), out_phy.data()) != Result::Ok) {
        if (fresh) engine().release_task(task);
        return HB_DNN_OUT_OF_MEMORY;  // the emulator's buffers
    }
    *task_handle = task;
    return HB_DNN_SUCCESS;
}

}  // extern "C"
