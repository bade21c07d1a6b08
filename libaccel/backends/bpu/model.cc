// model.cc - loading a model (a packed .bin / .hbm file of one or more models) and describing its
// tensors through the ABI.
//
// A file packing several models loads its first one; "path#name" loads the model `name` of it (when
// no file is called "path#name" itself). From memory, the first model.
#include <sys/stat.h>

#include <cstring>
#include <new>

#include "driver_kit/abi_copy.h"
#include "entry_points.h"
#include "handles.h"
#include "status.h"

namespace accel_bpu {
namespace {

bool is_file(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

accel_tensor_info abi_info(const TensorDesc& t) {
    accel_tensor_info info{};
    info.struct_size = sizeof info;
    info.dtype = t.dtype;
    info.layout = t.layout;
    info.ndim = t.ndim;
    info.name = t.name.c_str();
    memcpy(info.shape, t.shape, sizeof info.shape);
    memcpy(info.strides, t.strides, sizeof info.strides);
    info.byte_size = t.byte_size;
    accel_quantization& q = info.quant;
    q.type = t.quant;
    q.axis = t.quant_axis;
    q.count = (uint32_t)(t.quant == ACCEL_QUANT_SHIFT ? t.shifts.size() : t.scales.size());
    q.scales = t.scales.empty() ? nullptr : t.scales.data();
    q.zero_points = t.zero_points.empty() ? nullptr : t.zero_points.data();
    q.shifts = t.shifts.empty() ? nullptr : t.shifts.data();
    info.image_format = t.image_format;
    info.plane_count = t.plane_count;
    info.plane_offset[0] = t.plane_offset[0];
    info.plane_offset[1] = t.plane_offset[1];
    info.image_width = t.image_width;
    info.image_height = t.image_height;
    info.width_align = t.width_align;
    info.height_align = t.height_align;
    return info;
}

accel_status finish_load(accel_device* d, const char* fn, const Status& s, std::unique_ptr<Model> model,
                         accel_model** out) {
    if (!s.ok()) return fail(s.code, std::string(fn) + ": " + s.message);
    auto* m = new (std::nothrow) accel_model();
    if (!m) return fail(ACCEL_ERR_OUT_OF_MEMORY, "bpu: out of host memory");
    m->header.driver = &kDriverTable;
    m->device = d;
    d->refs.fetch_add(1, std::memory_order_relaxed);
    for (const TensorDesc& t : model->inputs()) m->input_infos.push_back(abi_info(t));
    for (const TensorDesc& t : model->outputs()) m->output_infos.push_back(abi_info(t));
    m->model = std::move(model);
    *out = m;
    return ACCEL_OK;
}

accel_status tensor_info(const std::vector<accel_tensor_info>& infos, size_t index, const char* what,
                         accel_tensor_info* out) {
    if (index >= infos.size())
        return fail(ACCEL_ERR_INVALID_ARGUMENT, format("accel_model_%s_info: index %zu, but the model has %zu %ss",
                                                       what, index, infos.size(), what));
    accel_kit::copy_to_caller(infos[index], out);
    return ACCEL_OK;
}

}  // namespace

accel_status model_load_file(accel_device* d, const char* path, accel_model** out) {
    std::string file(path), name;
    size_t hash = file.rfind('#');
    if (hash != std::string::npos && !is_file(file) && is_file(file.substr(0, hash))) {
        name = file.substr(hash + 1);
        file.resize(hash);
    }
    std::unique_ptr<Model> model;
    Status s = d->runtime->load_file(file, name, &model);
    if (!s.ok()) s.message = "'" + std::string(path) + "': " + s.message;
    return finish_load(d, "accel_model_load_file", s, std::move(model), out);
}

accel_status model_load_memory(accel_device* d, const void* data, uint64_t size, accel_model** out) {
    std::unique_ptr<Model> model;
    Status s = d->runtime->load_memory(data, size, &model);
    return finish_load(d, "accel_model_load_memory", s, std::move(model), out);
}

void model_retain(accel_model* m) { m->refs.fetch_add(1, std::memory_order_relaxed); }

void model_release(accel_model* m) {
    if (m->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    accel_device* d = m->device;
    delete m;
    device_release(d);
}

accel_status model_input_count(accel_model* m, size_t* out) {
    *out = m->input_infos.size();
    return ACCEL_OK;
}

accel_status model_output_count(accel_model* m, size_t* out) {
    *out = m->output_infos.size();
    return ACCEL_OK;
}

accel_status model_input_info(accel_model* m, size_t index, accel_tensor_info* out) {
    return tensor_info(m->input_infos, index, "input", out);
}

accel_status model_output_info(accel_model* m, size_t index, accel_tensor_info* out) {
    return tensor_info(m->output_infos, index, "output", out);
}

}  // namespace accel_bpu
