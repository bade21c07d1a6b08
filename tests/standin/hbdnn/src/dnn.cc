// dnn.cc - the stand-in's hbDNN* API: models from its .bin files run on accel's emulator through the
// common engine (../../common/engine.h), with the X3/X5 runtime's rules: 32 tasks in flight, timeouts,
// the vendor's error codes, device memory read and written by bus address, tensors converted as the
// BPU's input and output stages would.
#include <vector>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"
#include "engine.h"
#include "model_file.h"

namespace standin {
namespace {

constexpr int kTaskLimit = 32;  // tasks in flight at once, as on the X3/X5 runtime

// The emulator with the BPU's int8 rules: the stand-in computes a quantized model as the BPU does.
Engine& engine() {
    static Engine* e =
        new Engine({"emu:cores=2,max_inflight=64,int8=bpu", kTaskLimit, HB_DNN_SUCCESS, HB_DNN_RUN_TASK_FAILED});
    return *e;  // never destroyed: jobs may complete during exit
}

using VendorModel = DnnModel;
constexpr int32_t kNoDeviceStatus = HB_DNN_RUN_TASK_FAILED;

}  // namespace
}  // namespace standin

using namespace standin;

#include "hb_model_api.inc"

namespace {

bool is_nv12(int32_t type) { return type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE; }

// Whether the user's tensor fits the model's description closely enough for the BPU to run it. An NV12
// input may be given as NV12 (one block) or NV12_SEPARATE (the Y plane in sysMem[0], UV in sysMem[1]),
// whichever the model says (the vendor's documentation lets the user change tensorType so).
bool tensor_matches(const hbDNNTensor& given, const DnnTensor& expected, const TensorDesc& desc) {
    const hbDNNTensorProperties& p = given.properties;
    const bool type_ok =
        p.tensorType == expected.props.tensorType || (is_nv12(p.tensorType) && is_nv12(expected.props.tensorType));
    if (!type_ok || !same_shape(p.validShape, expected.props.validShape) ||
        !same_shape(p.alignedShape, expected.props.alignedShape))
        return false;
    if (p.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE)
        return given.sysMem[0].memSize >= (uint64_t)first_plane(desc).byte_size &&
               given.sysMem[1].memSize >= (uint64_t)second_plane(desc).byte_size && given.sysMem[1].phyAddr != 0;
    return given.sysMem[0].memSize >= (uint32_t)expected.props.alignedByteSize;
}

// Where the UV plane of an input given as NV12_SEPARATE lies (0: the tensor is one block).
uint64_t second_plane_phy(const hbDNNTensor& given) {
    return given.properties.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE ? given.sysMem[1].phyAddr : 0;
}

}  // namespace

extern "C" {

const char* hbDNNGetVersion(void) { return "1.24.5 (accel stand-in)"; }

const char* hbDNNGetErrorDesc(int32_t code) {
    switch (code) {
        case HB_DNN_SUCCESS: return "success";
        case HB_DNN_INVALID_ARGUMENT: return "invalid argument";
        case HB_DNN_INVALID_MODEL: return "invalid model";
        case HB_DNN_MODEL_NUMBER_EXCEED_LIMIT: return "model number exceeds limit";
        case HB_DNN_INVALID_PACKED_DNN_HANDLE: return "invalid packed dnn handle";
        case HB_DNN_INVALID_DNN_HANDLE: return "invalid dnn handle";
        case HB_DNN_CAN_NOT_OPEN_FILE: return "can not open file";
        case HB_DNN_OUT_OF_MEMORY: return "out of memory";
        case HB_DNN_TIMEOUT: return "timeout";
        case HB_DNN_TASK_NUM_EXCEED_LIMIT: return "task number exceeds limit";
        case HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT: return "task batch size exceeds limit";
        case HB_DNN_INVALID_TASK_HANDLE: return "invalid task handle";
        case HB_DNN_RUN_TASK_FAILED: return "run task failed";
        case HB_DNN_MODEL_IS_RUNNING: return "model is running";
        case HB_DNN_INCOMPATIBLE_MODEL: return "incompatible model";
        case HB_DNN_API_USE_ERROR: return "api use error";
        case HB_DNN_MULTI_PROGRESS_USE_ERROR: return "multi process use error";
        case HB_SYS_INVALID_ARGUMENT: return "sys: invalid argument";
        case HB_SYS_OUT_OF_MEMORY: return "sys: out of memory";
        case HB_SYS_REGISTER_MEM_FAILED: return "sys: register mem failed";
        default: return "unknown error code";
    }
}

int32_t hbDNNInfer(hbDNNTaskHandle_t* task_out, hbDNNTensor** output, const hbDNNTensor* input, hbDNNHandle_t h,
                   hbDNNInferCtrlParam* ctrl) {
    STANDIN_MODEL(h);
    if (!task_out || *task_out || !output || !*output || !input || !ctrl) return HB_DNN_INVALID_ARGUMENT;
    if (ctrl->priority < HB_DNN_PRIORITY_LOWEST || ctrl->priority > HB_DNN_PRIORITY_HIGHEST)
        return HB_DNN_INVALID_ARGUMENT;
    for (size_t i = 0; i < model->inputs.size(); i++)
        if (!tensor_matches(input[i], model->vendor_inputs[i], model->inputs[i])) return HB_DNN_INVALID_ARGUMENT;
    for (size_t i = 0; i < model->outputs.size(); i++)
        if (!tensor_matches((*output)[i], model->vendor_outputs[i], model->outputs[i])) return HB_DNN_INVALID_ARGUMENT;
    Task* task = nullptr;
    if (engine().create_task(&task) != Result::Ok) return HB_DNN_TASK_NUM_EXCEED_LIMIT;
    std::vector<uint64_t> in_phy, in_phy2, out_phy;
    for (size_t i = 0; i < model->inputs.size(); i++) {
        in_phy.push_back(input[i].sysMem[0].phyAddr);
        in_phy2.push_back(second_plane_phy(input[i]));
    }
    for (size_t i = 0; i < model->outputs.size(); i++) out_phy.push_back((*output)[i].sysMem[0].phyAddr);
    // The input stage reads the device side of each input now (what the BPU would read).
    if (engine().add_part(task, model, model->inputs, in_phy.data(), model->outputs, out_phy.data(), in_phy2.data()) !=
            Result::Ok ||
        engine().stage_inputs(task) != Result::Ok) {
        engine().release_task(task);
        return HB_DNN_INVALID_ARGUMENT;  // an input address no BPU memory covers, or no memory
    }
    if (engine().submit(task, ctrl->priority, (uint64_t)(ctrl->bpuCoreId & 3)) != Result::Ok) {
        engine().release_task(task);
        return HB_DNN_RUN_TASK_FAILED;
    }
    *task_out = task;
    return HB_DNN_SUCCESS;
}

// Tests only: while held, tasks are accepted (and counted against the limit) but wait; releasing the
// hold runs them in order. Lets a test fill the task limit or time out a wait deterministically.
void standin_hbdnn_hold(int on) { engine().hold(on != 0); }

// Declared as the real header does; nothing of ours runs regions of images.
int32_t hbDNNRoiInfer(hbDNNTaskHandle_t*, hbDNNTensor**, const hbDNNTensor*, hbDNNRoi*, int32_t, hbDNNHandle_t,
                      hbDNNInferCtrlParam*) {
    return HB_DNN_API_USE_ERROR;
}

int32_t hbDNNSetTaskDoneCb(hbDNNTaskHandle_t h, hbDNNTaskDoneCb cb, void* userdata) {
    Task* task = engine().known_task(h);
    if (!task) return HB_DNN_INVALID_TASK_HANDLE;
    engine().set_callback(task, cb, userdata);
    return HB_DNN_SUCCESS;
}

int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t h, int32_t timeout_ms) {
    Task* task = engine().known_task(h);
    if (!task) return HB_DNN_INVALID_TASK_HANDLE;
    int32_t status = HB_DNN_SUCCESS;
    return engine().wait(task, timeout_ms, &status) == Result::Timeout ? HB_DNN_TIMEOUT : status;
}

int32_t hbDNNReleaseTask(hbDNNTaskHandle_t h) {
    return engine().release_task(engine().known_task(h)) == Result::Ok ? HB_DNN_SUCCESS : HB_DNN_INVALID_TASK_HANDLE;
}

}  // extern "C"
