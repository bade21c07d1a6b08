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

const UcpModel* known_model(hbDNNHandle_t h) { return static_cast<const UcpModel*>(engine().known_model(h)); }

bool same_shape(const hbDNNTensorShape& a, const hbDNNTensorShape& b) {
    if (a.numDimensions != b.numDimensions) return false;
    for (int i = 0; i < a.numDimensions; i++)
        if (a.dimensionSize[i] != b.dimensionSize[i]) return false;
    return true;
}

// The layout the user's tensor gives for the model's `expected` one into `out`, or false if the BPU
// could not run it: another type or shape, a static stride changed, a dynamic one left at -1 or
// overlapping, memory smaller than the strides reach.
bool given_layout(const hbDNNTensor& given, const UcpTensor& expected, const TensorDesc& desc, TensorDesc& out) {
    const hbDNNTensorProperties& p = given.properties;
    if (p.tensorType != expected.props.tensorType || !same_shape(p.validShape, expected.props.validShape))
        return false;
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

int32_t load_status(Result r) {
    switch (r) {
        case Result::Ok: return HB_DNN_SUCCESS;
        case Result::InvalidArgument: return HB_DNN_INVALID_ARGUMENT;
        case Result::FileOpen: return HB_DNN_CAN_NOT_OPEN_FILE;
        case Result::InvalidModel: return HB_DNN_INVALID_MODEL;
        case Result::IncompatibleModel: return HB_DNN_INCOMPATIBLE_MODEL;
        default: return HB_UCP_INIT_FAILED;  // no emulator
    }
}

int32_t tensor_name(const char** name, const std::vector<TensorDesc>& ts, int32_t index) {
    if (!name || index < 0 || (size_t)index >= ts.size()) return HB_DNN_INVALID_ARGUMENT;
    *name = ts[index].name.c_str();
    return HB_DNN_SUCCESS;
}

int32_t tensor_props(hbDNNTensorProperties* props, const std::vector<UcpTensor>& ts, int32_t index) {
    if (!props || index < 0 || (size_t)index >= ts.size()) return HB_DNN_INVALID_ARGUMENT;
    *props = ts[index].properties();
    return HB_DNN_SUCCESS;
}

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

}  // namespace
}  // namespace ucp
}  // namespace standin

using namespace standin;
using namespace standin::ucp;

extern "C" {

const char* hbDNNGetVersion(void) { return "3.x (accel stand-in)"; }

int32_t hbDNNInitializeFromFiles(hbDNNPackedHandle_t* packed, char const** names, int32_t count) {
    return load_status(engine().load_files(names, count, parse_model_file, packed));
}

int32_t hbDNNInitializeFromDDR(hbDNNPackedHandle_t* packed, const void** data, int32_t* lengths, int32_t count) {
    return load_status(engine().load_memory(data, lengths, count, parse_model_file, packed));
}

int32_t hbDNNRelease(hbDNNPackedHandle_t handle) {
    return engine().release_pack(handle) == Result::Ok ? HB_DNN_SUCCESS : HB_DNN_INVALID_PACKED_DNN_HANDLE;
}

int32_t hbDNNGetModelNameList(char const*** names, int32_t* count, hbDNNPackedHandle_t handle) {
    if (!names || !count) return HB_DNN_INVALID_ARGUMENT;
    return engine().model_names(handle, names, count) == Result::Ok ? HB_DNN_SUCCESS : HB_DNN_INVALID_PACKED_DNN_HANDLE;
}

int32_t hbDNNGetModelHandle(hbDNNHandle_t* out, hbDNNPackedHandle_t handle, char const* name) {
    if (!out || !name) return HB_DNN_INVALID_ARGUMENT;
    return engine().find_model(handle, name, out) == Result::Ok ? HB_DNN_SUCCESS : HB_DNN_INVALID_ARGUMENT;
}

#define STANDIN_MODEL(h) \
    const UcpModel* model = known_model(h); \
    if (!model) return HB_DNN_INVALID_DNN_HANDLE

int32_t hbDNNGetInputCount(int32_t* count, hbDNNHandle_t h) {
    STANDIN_MODEL(h);
    if (!count) return HB_DNN_INVALID_ARGUMENT;
    *count = (int32_t)model->inputs.size();
    return HB_DNN_SUCCESS;
}

int32_t hbDNNGetOutputCount(int32_t* count, hbDNNHandle_t h) {
    STANDIN_MODEL(h);
    if (!count) return HB_DNN_INVALID_ARGUMENT;
    *count = (int32_t)model->outputs.size();
    return HB_DNN_SUCCESS;
}

int32_t hbDNNGetInputName(char const** name, hbDNNHandle_t h, int32_t i) {
    STANDIN_MODEL(h);
    return tensor_name(name, model->inputs, i);
}

int32_t hbDNNGetOutputName(char const** name, hbDNNHandle_t h, int32_t i) {
    STANDIN_MODEL(h);
    return tensor_name(name, model->outputs, i);
}

int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties* props, hbDNNHandle_t h, int32_t i) {
    STANDIN_MODEL(h);
    return tensor_props(props, model->ucp_inputs, i);
}

int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties* props, hbDNNHandle_t h, int32_t i) {
    STANDIN_MODEL(h);
    return tensor_props(props, model->ucp_outputs, i);
}

int32_t hbDNNInferV2(hbUCPTaskHandle_t* task_handle, hbDNNTensor* output, hbDNNTensor const* input,
                     hbDNNHandle_t h) {
    STANDIN_MODEL(h);
    if (!output || !input) return HB_DNN_INVALID_ARGUMENT;
    if (!task_handle) return infer_sync(output, input, h);
    std::vector<TensorDesc> in(model->inputs.size()), out(model->outputs.size());
    std::vector<uint64_t> in_phy, out_phy;
    for (size_t i = 0; i < in.size(); i++) {
        if (!given_layout(input[i], model->ucp_inputs[i], model->inputs[i], in[i])) return HB_DNN_INVALID_ARGUMENT;
        in_phy.push_back(input[i].sysMem.phyAddr);
    }
    for (size_t i = 0; i < out.size(); i++) {
        if (!given_layout(output[i], model->ucp_outputs[i], model->outputs[i], out[i])) return HB_DNN_INVALID_ARGUMENT;
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
