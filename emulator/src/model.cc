// model.cc - loading a model: validate the image, copy its weights into device memory, plan its
// intermediates, and describe its inputs and outputs.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "driver_kit/abi_copy.h"
#include "handles.h"
#include "model_reader.h"
#include "ops.h"
#include "status.h"

namespace accel_emu {

namespace {

// An image input's fields (ABI 1.2), from its dense strides: NV12's UV plane starts after H rows of Y.
void describe_image(const TensorDesc& t, accel_tensor_info* info) {
    int64_t height = 0, width = 0;
    image_size(t.image_format, t.dims, &height, &width);
    info->image_format = t.image_format;
    info->image_width = (uint32_t)width;
    info->image_height = (uint32_t)height;
    info->plane_count = t.image_format == ACCEL_IMAGE_NV12 ? 2 : 1;
    info->plane_offset[0] = 0;
    info->plane_offset[1] = t.image_format == ACCEL_IMAGE_NV12 ? (uint64_t)(height * info->strides[1]) : 0;
    // 4:2:0 planes halve both dims; the emulator itself asks no more than that.
    const uint32_t align = is_nv12_form(t.image_format) ? 2 : 1;
    info->width_align = align;
    info->height_align = align;
}

void describe(const TensorDesc& t, accel_tensor_info* info) {
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    info->dtype = t.dtype;
    info->layout = t.layout;
    info->ndim = (uint32_t)t.ndim;
    info->name = t.name.c_str();
    int64_t elem = (int64_t)(t.numel ? t.bytes / (uint64_t)t.numel : 0);
    int64_t stride = elem;
    for (int i = t.ndim - 1; i >= 0; i--) {
        info->shape[i] = t.dims[i];
        info->strides[i] = stride;
        stride *= t.dims[i];
    }
    info->byte_size = t.bytes;
    info->quant.type = t.quant.type;
    info->quant.axis = t.quant.axis;
    const bool shift = t.quant.type == ACCEL_QUANT_SHIFT;  // its scales are the kernels' copy (graph.h)
    info->quant.count = (uint32_t)(shift ? t.quant.shifts.size() : t.quant.scales.size());
    info->quant.scales = shift || t.quant.scales.empty() ? nullptr : t.quant.scales.data();
    info->quant.zero_points = shift || t.quant.zero_points.empty() ? nullptr : t.quant.zero_points.data();
    info->quant.shifts = t.quant.shifts.empty() ? nullptr : t.quant.shifts.data();
    if (t.image_format != ACCEL_IMAGE_NONE) describe_image(t, info);
}

accel_status allocate_or_fail(accel_device* d, uint64_t bytes, const char* what, Block* out) {
    if (d->pool.allocate(bytes, out)) return ACCEL_OK;
    return fail(ACCEL_ERR_OUT_OF_MEMORY,
                format("emu: cannot allocate %llu bytes of device memory for the model's %s "
                       "(%llu of %llu pool bytes in use; open the device with a larger pool=)",
                       (unsigned long long)bytes, what, (unsigned long long)d->pool.stats().bytes_in_use,
                       (unsigned long long)d->pool.capacity()));
}

void free_model_memory(accel_model* m) {
    for (auto& w : m->all_workspaces) m->device->pool.release(w->block, nullptr);
    m->all_workspaces.clear();
    m->idle_workspaces.clear();
    m->device->pool.release(m->weights, nullptr);
    m->weights = Block();
    m->device->pool.release(m->prepared, nullptr);
    m->prepared = Block();
}

// Runs each node's prepare once, on its constant inputs, into the model's prepared block (device memory,
// so that it counts in the pool's figures like the weights it is made from).
accel_status prepare_nodes(accel_model* m) {
    const MemoryPlan& plan = m->plan;
    if (!plan.prepared_bytes) return ACCEL_OK;
    accel_status s = allocate_or_fail(m->device, plan.prepared_bytes, "prepared weights", &m->prepared);
    if (s != ACCEL_OK) return s;
    std::vector<const void*> ins;
    for (size_t n = 0; n < m->graph.nodes.size(); n++) {
        if (plan.prepared_offsets[n] == kNotPrepared) continue;
        const Node& node = m->graph.nodes[n];
        ins.assign(node.inputs.size(), nullptr);
        for (size_t i = 0; i < node.inputs.size(); i++) {
            if (node.inputs[i] == kAbsent) continue;
            const TensorPlace& p = plan.tensors[node.inputs[i]];
            if (p.place == Place::Constant) ins[i] = m->weights.ptr + p.offset;
        }
        plan.ops[n]->prepare(m->graph, node, ins.data(), m->prepared.ptr + plan.prepared_offsets[n]);
    }
    return ACCEL_OK;
}

}  // namespace

accel_status acquire_workspace(accel_model* m, Workspace** out) {
    std::lock_guard<std::mutex> lock(m->workspace_mutex);
    if (!m->idle_workspaces.empty()) {
        *out = m->idle_workspaces.back();
        m->idle_workspaces.pop_back();
        return ACCEL_OK;
    }
    // One more job of this model runs at the same time as the others: a workspace of its own, kept.
    auto ws = std::unique_ptr<Workspace>(new (std::nothrow) Workspace());
    if (!ws) return fail(ACCEL_ERR_OUT_OF_MEMORY, "emu: out of host memory");
    accel_status s = allocate_or_fail(m->device, m->plan.workspace_bytes, "workspace (intermediates)", &ws->block);
    if (s != ACCEL_OK) return s;
    size_t arity_in = 1, arity_out = 1;
    for (const Node& n : m->graph.nodes) {
        arity_in = std::max(arity_in, n.inputs.size());
        arity_out = std::max(arity_out, n.outputs.size());
    }
    ws->tensor_ptrs.assign(m->graph.tensors.size(), nullptr);
    ws->node_inputs.assign(arity_in, nullptr);
    ws->node_outputs.assign(arity_out, nullptr);
    *out = ws.get();
    m->all_workspaces.push_back(std::move(ws));
    return ACCEL_OK;
}

void release_workspace(accel_model* m, Workspace* ws) {
    std::lock_guard<std::mutex> lock(m->workspace_mutex);
    m->idle_workspaces.push_back(ws);
}

// Does the model compute on quantized tensors (whose arithmetic the int8 rules decide)?
static bool has_quantized_ops(const Graph& g) {
    for (const TensorDesc& t : g.tensors)
        if (t.quant.type != ACCEL_QUANT_NONE) return true;
    return false;
}

// `origin` names the file in error messages ("" when loading from memory).
static accel_status load_image(accel_device* d, const void* data, uint64_t size, const std::string& origin,
                               accel_model** out) {
    auto* m = new (std::nothrow) accel_model();
    if (!m) return fail(ACCEL_ERR_OUT_OF_MEMORY, "emu: out of host memory loading a model");
    m->header.driver = &kDriverTable;
    m->device = d;
    d->refs.fetch_add(1, std::memory_order_relaxed);

    std::string error;
    uint64_t data_offset = 0;
    const auto* bytes = static_cast<const uint8_t*>(data);
    if (!read_model(bytes, (size_t)size, &m->graph, &data_offset, &error)) {
        model_release(m);
        return fail(ACCEL_ERR_MODEL_FORMAT,
                    "invalid model" + (origin.empty() ? std::string() : " '" + origin + "'") + ": " + error);
    }
    if (m->graph.int8_rules != d->options.int8 && has_quantized_ops(m->graph)) {
        model_release(m);
        return fail(ACCEL_ERR_UNSUPPORTED, "model" + (origin.empty() ? std::string() : " '" + origin + "'") +
                                               " computes int8 with other rules than the device (emu:int8=...)");
    }
    accel_status s = ACCEL_OK;
    if (m->graph.weights_bytes) {
        // As on a board: weights live in device memory, so the file can change or go after this.
        s = allocate_or_fail(d, m->graph.weights_bytes, "weights", &m->weights);
        if (s == ACCEL_OK) memcpy(m->weights.ptr, bytes + data_offset, m->graph.weights_bytes);
    }
    if (s == ACCEL_OK) {
        m->plan = plan_memory(m->graph, m->device->options.threads);
        s = prepare_nodes(m);
    }
    if (s == ACCEL_OK) {
        Workspace* ws = nullptr;
        s = acquire_workspace(m, &ws);  // the first one now, so that a model too big fails to load
        if (s == ACCEL_OK) release_workspace(m, ws);
    }
    if (s != ACCEL_OK) {
        model_release(m);
        return s;
    }
    m->input_infos.resize(m->graph.inputs.size());
    m->output_infos.resize(m->graph.outputs.size());
    for (size_t i = 0; i < m->graph.inputs.size(); i++)
        describe(m->graph.tensors[m->graph.inputs[i]], &m->input_infos[i]);
    for (size_t i = 0; i < m->graph.outputs.size(); i++)
        describe(m->graph.tensors[m->graph.outputs[i]], &m->output_infos[i]);
    for (const Node& n : m->graph.nodes) m->node_types.push_back(node_type_name(n));
    *out = m;
    return ACCEL_OK;
}

accel_status model_load_file(accel_device* d, const char* path, accel_model** out) {
    FILE* f = fopen(path, "rb");
    if (!f) return fail(ACCEL_ERR_NOT_FOUND, format("cannot open model file '%s': %s", path, strerror(errno)));
    std::vector<uint8_t> bytes;
    uint8_t chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error) return fail(ACCEL_ERR_NOT_FOUND, format("cannot read model file '%s'", path));
    return load_image(d, bytes.data(), bytes.size(), path, out);
}

accel_status model_load_memory(accel_device* d, const void* data, uint64_t size, accel_model** out) {
    return load_image(d, data, size, std::string(), out);
}

void model_retain(accel_model* m) { m->refs.fetch_add(1, std::memory_order_relaxed); }

void model_release(accel_model* m) {
    if (m->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    accel_device* d = m->device;
    free_model_memory(m);
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

static accel_status copy_info(const std::vector<accel_tensor_info>& infos, size_t index, const char* what,
                              accel_tensor_info* out) {
    if (index >= infos.size())
        return fail(ACCEL_ERR_INVALID_ARGUMENT,
                    format("%s index %zu out of range (the model has %zu)", what, index, infos.size()));
    accel_kit::copy_to_caller(infos[index], out);
    return ACCEL_OK;
}

accel_status model_input_info(accel_model* m, size_t index, accel_tensor_info* out) {
    return copy_info(m->input_infos, index, "input", out);
}

accel_status model_output_info(accel_model* m, size_t index, accel_tensor_info* out) {
    return copy_info(m->output_infos, index, "output", out);
}

}  // namespace accel_emu
