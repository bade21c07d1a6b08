// model.cc - loading an .xmodel: deserialize, select the DPU subgraph (exactly one), create one runner
// per in-flight slot, describe its tensors (xint8/xuint8 with fix_point as ACCEL_QUANT_SHIFT, or float32
// unquantized; 4-D ones in the runner's tensor format) and start one worker thread per runner.
// Everything VART would abort on is checked here first.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "driver_kit/abi_copy.h"
#include "entry_points.h"
#include "handles.h"

namespace accel_vart {
namespace {

bool is_dpu(const xir::Subgraph* s) { return s->has_attr("device") && s->get_attr<std::string>("device") == "DPU"; }

bool is_fixed_point(const xir::DataType& dt) {
    return (dt.type == xir::DataType::XINT || dt.type == xir::DataType::XUINT) && dt.bit_width == 8;
}

bool is_float32(const xir::DataType& dt) { return dt.type == xir::DataType::FLOAT && dt.bit_width == 32; }

// What the DPU runner would abort on (create_runner) or what we cannot describe.
accel_status check_tensor(const xir::Tensor* t) {
    const std::string name = t->get_name();
    const xir::DataType& dt = t->get_data_type();
    if (!is_fixed_point(dt) && !is_float32(dt))
        return fail(ACCEL_ERR_UNSUPPORTED,
                    format("DPU tensor '%s' is %s; only xint8, xuint8 and float32 tensors are supported", name.c_str(),
                           dt.to_string().c_str()));
    const std::vector<int32_t> shape = t->get_shape();
    if (shape.size() > ACCEL_MAX_DIMS)  // rank 0 (a scalar) is one element
        return fail(ACCEL_ERR_UNSUPPORTED, format("DPU tensor '%s' has rank %zu", name.c_str(), shape.size()));
    if (is_fixed_point(dt) && !t->has_attr("fix_point"))
        return fail(ACCEL_ERR_MODEL_FORMAT, format("DPU tensor '%s' has no fix_point", name.c_str()));
    for (int32_t dim : shape)
        if (dim <= 0) return fail(ACCEL_ERR_MODEL_FORMAT, format("DPU tensor '%s' has a dim <= 0", name.c_str()));
    return ACCEL_OK;
}

// The runner's layout of its 4-D tensors, by the enumerator's name (its value differs between VART's
// headers, so the raw enum never crosses into our ABI).
accel_status runner_layout(vart::Runner* runner, accel_layout* out) {
    switch (runner->get_tensor_format()) {
        case vart::Runner::TensorFormat::NHWC: *out = ACCEL_LAYOUT_NHWC; return ACCEL_OK;
        case vart::Runner::TensorFormat::NCHW: *out = ACCEL_LAYOUT_NCHW; return ACCEL_OK;
    }
    return fail(ACCEL_ERR_UNSUPPORTED,
                format("the runner reports tensor format %d, neither NHWC nor NCHW", (int)runner->get_tensor_format()));
}

// The model's view of one DPU tensor; the strings and quantization arrays live in the model.
accel_status describe(accel_model* m, const xir::Tensor* t, accel_layout layout4, size_t slot_in_storage,
                      accel_tensor_info* info) {
    if (accel_status s = check_tensor(t)) return s;
    const std::vector<int32_t> shape = t->get_shape();
    const xir::DataType& dt = t->get_data_type();
    *info = accel_tensor_info{};
    info->struct_size = sizeof *info;
    if (is_float32(dt)) info->dtype = ACCEL_DTYPE_FLOAT32;
    else info->dtype = dt.type == xir::DataType::XINT ? ACCEL_DTYPE_INT8 : ACCEL_DTYPE_UINT8;
    info->layout = shape.size() == 4 ? layout4 : ACCEL_LAYOUT_NONE;
    info->ndim = (uint32_t)shape.size();
    int64_t stride = dt.bit_width / 8;  // byte strides, dense
    for (int d = (int)shape.size() - 1; d >= 0; d--) {
        info->shape[d] = shape[d];
        info->strides[d] = stride;
        stride *= shape[d];
    }
    info->byte_size = (uint64_t)stride;
    m->names[slot_in_storage] = t->get_name();
    info->quant.axis = -1;
    if (!is_fixed_point(dt)) return ACCEL_OK;  // ACCEL_QUANT_NONE, count 0
    // real = q * 2^-fix_point, which is ACCEL_QUANT_SHIFT exactly; a negative fix point does not fit its
    // uint8 shift and becomes the per-tensor scale 2^-fix_point (also exact).
    const int fp = t->get_attr<int>("fix_point");
    info->quant.count = 1;
    if (fp >= 0 && fp <= 255) {
        info->quant.type = ACCEL_QUANT_SHIFT;
        m->shifts[slot_in_storage] = (uint8_t)fp;
    } else {
        info->quant.type = ACCEL_QUANT_PER_TENSOR;
        m->scales[slot_in_storage] = std::ldexp(1.0f, -fp);
    }
    return ACCEL_OK;
}

// `subgraph`: the DPU subgraph to run, by name; nullptr for the file's only one.
accel_status make_runners(accel_device* d, std::unique_ptr<xir::Graph> graph, const char* subgraph,
                          std::shared_ptr<Runners>* out) {
    std::vector<const xir::Subgraph*> dpu;
    std::string names;
    for (const xir::Subgraph* s : graph->get_root_subgraph()->children_topological_sort())
        if (is_dpu(s) && (!subgraph || s->get_name() == subgraph)) {
            dpu.push_back(s);
            names += (names.empty() ? "'" : ", '") + s->get_name() + "'";
        }
    if (dpu.empty() && subgraph) {
        for (const xir::Subgraph* s : graph->get_root_subgraph()->children_topological_sort())
            if (is_dpu(s)) names += (names.empty() ? "'" : ", '") + s->get_name() + "'";
        return fail(ACCEL_ERR_INVALID_ARGUMENT, format("the xmodel has no DPU subgraph '%s'; its DPU subgraphs: %s",
                                                       subgraph, names.empty() ? "none" : names.c_str()));
    }
    if (dpu.empty()) return fail(ACCEL_ERR_UNSUPPORTED, "the xmodel has no DPU subgraph");
    if (dpu.size() > 1)
        return fail(ACCEL_ERR_UNSUPPORTED,
                    format("the xmodel has %zu DPU subgraphs (%s): name the one to run (accel_load_options.subgraph; "
                           "Device.load's subgraph=), as VART makes one runner per subgraph",
                           dpu.size(), names.c_str()));
    for (const auto& set : {dpu[0]->get_input_tensors(), dpu[0]->get_output_tensors()})
        for (const xir::Tensor* t : set)
            if (accel_status s = check_tensor(t)) return s;
    auto r = std::make_shared<Runners>();
    r->graph = std::move(graph);
    for (uint32_t i = 0; i < d->runners; i++) {
        Slot slot;
        slot.runner = vart::Runner::create_runner(dpu[0], "run");
        if (!slot.runner) return fail(ACCEL_ERR_DEVICE, "create_runner returned no runner");
        slot.ext = dynamic_cast<vart::RunnerExt*>(slot.runner.get());
        if (slot.ext) {
            slot.inputs = slot.ext->get_inputs();
            slot.outputs = slot.ext->get_outputs();
        }
        if (i == 0) {
            r->input_tensors = slot.runner->get_input_tensors();
            r->output_tensors = slot.runner->get_output_tensors();
            if (accel_status s = runner_layout(slot.runner.get(), &r->layout)) return s;
        }
        // Own buffers are usable only if there is one per tensor; otherwise every job copies.
        if (slot.inputs.size() != r->input_tensors.size() || slot.outputs.size() != r->output_tensors.size()) {
            slot.inputs.clear();
            slot.outputs.clear();
        }
        slot.lent_inputs.assign(slot.inputs.size(), false);
        slot.lent_outputs.assign(slot.outputs.size(), false);
        r->slots.push_back(std::move(slot));
    }
    *out = std::move(r);
    return ACCEL_OK;
}

// XIR ends the process on a file it cannot open: check first.
accel_status check_file(const char* path) {
    int fd = ::open(path, O_RDONLY);
    if (fd < 0) return fail(ACCEL_ERR_NOT_FOUND, format("cannot open '%s': %s", path, std::strerror(errno)));
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    ::close(fd);
    if (!regular) return fail(ACCEL_ERR_NOT_FOUND, format("'%s' is not a regular file", path));
    return ACCEL_OK;
}

// The graph from the file `path`, or (path nullptr) from `bytes`. `what` names the model in messages (the path,
// or "the model bytes"); `subgraph` as make_runners takes it.
accel_status load_graph(accel_device* d, const char* path, const std::string& bytes, const std::string& what,
                        const char* subgraph, accel_model** out) {
    if (path)
        if (accel_status s = check_file(path)) return s;
    std::unique_ptr<xir::Graph> graph;
    try {
        graph = path ? xir::Graph::deserialize(path) : xir::Graph::deserialize_from_string(bytes);
    } catch (const std::exception& e) {
        return fail(ACCEL_ERR_MODEL_FORMAT, format("%s is not a valid xmodel: %s", what.c_str(), e.what()));
    }
    if (!graph) return fail(ACCEL_ERR_MODEL_FORMAT, format("%s is not a valid xmodel", what.c_str()));
    std::shared_ptr<Runners> runners;
    if (accel_status s = make_runners(d, std::move(graph), subgraph, &runners)) return s;

    auto m = std::make_unique<accel_model>();
    m->header.driver = &kDriverTable;
    m->device = d;
    const size_t nin = runners->input_tensors.size(), nout = runners->output_tensors.size();
    m->names.resize(nin + nout);
    m->shifts.resize(nin + nout);
    m->scales.resize(nin + nout);
    m->input_infos.resize(nin);
    m->output_infos.resize(nout);
    for (size_t i = 0; i < nin; i++)
        if (accel_status s = describe(m.get(), runners->input_tensors[i], runners->layout, i, &m->input_infos[i]))
            return s;
    for (size_t i = 0; i < nout; i++)
        if (accel_status s =
                describe(m.get(), runners->output_tensors[i], runners->layout, nin + i, &m->output_infos[i]))
            return s;
    auto fix_up = [&](accel_tensor_info& info, size_t k) {
        info.name = m->names[k].c_str();
        if (info.quant.type == ACCEL_QUANT_SHIFT) info.quant.shifts = &m->shifts[k];
        else if (info.quant.type == ACCEL_QUANT_PER_TENSOR) info.quant.scales = &m->scales[k];
    };
    for (size_t i = 0; i < nin; i++) fix_up(m->input_infos[i], i);
    for (size_t i = 0; i < nout; i++) fix_up(m->output_infos[i], nin + i);
    m->runners = runners;
    device_retain(d);
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        d->models.erase(std::remove_if(d->models.begin(), d->models.end(),
                                       [](const std::weak_ptr<Runners>& w) { return w.expired(); }),
                        d->models.end());
        d->models.push_back(runners);
    }
    accel_model* raw = m.release();
    for (size_t s = 0; s < runners->slots.size(); s++) raw->workers.emplace_back(worker_loop, raw, s);
    *out = raw;
    return ACCEL_OK;
}

// The bytes go to XIR as they are (Graph::deserialize_from_string, Vitis AI 2.5 and later): no temporary file.
accel_status load_memory(accel_device* d, const void* data, uint64_t size, const char* subgraph, accel_model** out) {
    if (!data || size == 0) return fail(ACCEL_ERR_INVALID_ARGUMENT, "no model bytes");
    std::string bytes;
    try {
        bytes.assign(static_cast<const char*>(data), size);
    } catch (const std::exception&) {
        return fail(ACCEL_ERR_OUT_OF_MEMORY,
                    format("no memory for a copy of the %llu model bytes", (unsigned long long)size));
    }
    return load_graph(d, nullptr, bytes, "the model bytes", subgraph, out);
}

}  // namespace

accel_status model_load_file(accel_device* d, const char* path, accel_model** out) {
    return load_graph(d, path, std::string(), std::string("'") + path + "'", nullptr, out);
}

accel_status model_load_memory(accel_device* d, const void* data, uint64_t size, accel_model** out) {
    return load_memory(d, data, size, nullptr, out);
}

accel_status model_load_memory_with_options(accel_device* d, const void* data, uint64_t size,
                                            const accel_load_options* options, accel_model** out) {
    return load_memory(d, data, size, options->subgraph, out);
}

void model_retain(accel_model* m) { m->refs.fetch_add(1); }

void model_release(accel_model* m) {
    if (!m || m->refs.fetch_sub(1) != 1) return;
    {
        std::lock_guard<std::mutex> lock(m->queue_mutex);
        m->stop = true;
    }
    m->queue_cv.notify_all();
    for (std::thread& t : m->workers) t.join();
    for (Job* j : m->queue) job_unref(j);  // stale entries (jobs ended while queued)
    accel_device* d = m->device;
    delete m;  // the runners live on while a lent buffer uses them
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

static accel_status info_at(const std::vector<accel_tensor_info>& infos, const char* kind, size_t index,
                            accel_tensor_info* out) {
    if (index >= infos.size())
        return fail(ACCEL_ERR_INVALID_ARGUMENT, format("%s index %zu: the model has %zu", kind, index, infos.size()));
    if (out->struct_size < sizeof(uint32_t)) return fail(ACCEL_ERR_INVALID_ARGUMENT, "struct_size too small");
    accel_kit::copy_to_caller(infos[index], out);
    return ACCEL_OK;
}

accel_status model_input_info(accel_model* m, size_t index, accel_tensor_info* out) {
    return info_at(m->input_infos, "input", index, out);
}

accel_status model_output_info(accel_model* m, size_t index, accel_tensor_info* out) {
    return info_at(m->output_infos, "output", index, out);
}

}  // namespace accel_vart
