// device.cc - opening a BPU device from its URI options, its info and its statistics.
//
// URI: "bpu:<core>[,cores=N]" with <core> = 0 or 1 (every job of the device runs on that BPU core; the
// device has one core) or "any" (or nothing: the runtime picks among the board's cores, and a job's
// core_mask bit i selects BPU core i). cores=N says how many BPU cores the board has (default: what
// the runtime generation addresses: 2 for libdnn, RDK X5 has 1; 4 for hbUCP).
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "completer.h"
#include "driver_kit/abi_copy.h"
#include "driver_kit/options.h"
#include "entry_points.h"
#include "handles.h"
#include "status.h"

namespace accel_bpu {
namespace {

bool parse_uint(const std::string& text, uint32_t* out) {
    if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = (uint32_t)std::strtoul(text.c_str(), nullptr, 10);
    return true;
}

struct Options {
    bool any = true;
    uint32_t core = 0;
    uint32_t board_cores = 0;  // 0: the runtime's count
};

accel_status parse_options(const char* text, Options* out) {
    bool first = true;
    for (const accel_kit::OptionItem& item : accel_kit::split_options(text)) {
        if (first && !item.has_value && (item.key.empty() || item.key == "any")) {
        } else if (first && !item.has_value && parse_uint(item.key, &out->core)) {
            out->any = false;
        } else if (item.has_value && item.key == "cores" && parse_uint(item.value, &out->board_cores) &&
                   out->board_cores > 0) {
        } else {
            return fail(ACCEL_ERR_INVALID_ARGUMENT,
                        format("accel_device_open: bad bpu option '%s' in 'bpu:%s' (expected bpu:<core number> "
                               "or bpu:any, then optionally ,cores=N)",
                               item.text.c_str(), text));
        }
        first = false;
    }
    return ACCEL_OK;
}

void destroy_device(accel_device* d) {
    if (d->completer) d->completer->stop();
    delete d;
}

}  // namespace

accel_status device_open(const char* options, accel_device** out) {
    Options o;
    accel_status s = parse_options(options, &o);
    if (s != ACCEL_OK) return s;
    std::unique_ptr<Runtime> runtime = make_runtime();
    uint32_t board = o.board_cores ? o.board_cores : runtime->core_count();
    if (board > runtime->core_count())
        return fail(ACCEL_ERR_INVALID_ARGUMENT, format("accel_device_open: cores=%u, but the runtime addresses %u "
                                                       "BPU cores",
                                                       board, runtime->core_count()));
    if (!o.any && o.core >= board)
        return fail(ACCEL_ERR_NOT_FOUND, format("accel_device_open: no BPU core %u (the board has %u)", o.core, board));
    auto* d = new (std::nothrow) accel_device();
    if (!d) return fail(ACCEL_ERR_OUT_OF_MEMORY, "bpu: out of host memory");
    d->header.driver = &kDriverTable;
    d->name = runtime->device_name();
    d->runtime = std::move(runtime);
    d->max_inflight = d->runtime->task_limit();
    if (o.any) {
        d->cores = board;
        d->board_cores = board >= 64 ? ~0ull : (1ull << board) - 1;
        d->name += ", any core";
    } else {
        d->cores = 1;
        d->board_cores = 1ull << o.core;
        d->name += format(", core %u", o.core);
    }
    try {
        d->completer = Completer::start();
    } catch (...) {
        delete d;
        return fail(ACCEL_ERR_DEVICE, "bpu: cannot start the device's completion thread");
    }
    *out = d;
    return ACCEL_OK;
}

void device_retain(accel_device* d) { d->refs.fetch_add(1, std::memory_order_relaxed); }

void device_release(accel_device* d) {
    if (d->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_device(d);
}

accel_status device_describe(const char*, accel_device_description* out) {
    accel_device_description what{};
    what.int8_rules = ACCEL_INT8_RULES_BPU;
    // The image input types dnn_tensor.cc describes (NV12 in one buffer or as two, which it gives as one).
    what.image_formats = 1u << ACCEL_IMAGE_NV12 | 1u << ACCEL_IMAGE_Y | 1u << ACCEL_IMAGE_YUV444 |
                         1u << ACCEL_IMAGE_RGB | 1u << ACCEL_IMAGE_BGR;
    what.model_format = "hbm";  // Horizon's packed models: .bin on libdnn (X3/X5), .hbm on S100's UCP
    what.file_suffixes = ".bin,.hbm";
    what.first_device = "0";
    accel_kit::copy_to_caller(what, out);
    return ACCEL_OK;
}

accel_status device_get_info(accel_device* d, accel_device_info* out) {
    accel_device_info info{};
    info.cores = d->cores;
    info.max_inflight = d->max_inflight;
    info.debug = 0;
    info.alignment = kAlignment;
    info.pool_bytes = 0;  // the runtime does not say how much BPU memory there is
    info.name = d->name.c_str();
    info.backend = "bpu";
    accel_kit::copy_to_caller(info, out);
    return ACCEL_OK;
}

accel_status device_get_stats(accel_device* d, accel_memory_stats* out) {
    accel_memory_stats s{};
    {
        std::lock_guard<std::mutex> lock(d->stats_mutex);
        s.bytes_in_use = d->bytes_in_use;  // buffers only: the runtime keeps model memory to itself
        s.peak_bytes_in_use = d->peak_bytes_in_use;
        s.allocations = d->allocations;
    }
    s.live_buffers = d->live_buffers.load();
    s.bytes_copied = d->bytes_copied.load();
    s.jobs_submitted = d->jobs_submitted.load();
    s.jobs_completed = d->jobs_completed.load();
    accel_kit::copy_to_caller(s, out);
    return ACCEL_OK;
}

// No guard bytes on the BPU: nothing to check.
accel_status device_check(accel_device*) { return ACCEL_OK; }

}  // namespace accel_bpu
