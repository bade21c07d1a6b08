// device.cc - opening an emulated device from its URI options, its info, stats and integrity check.
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "driver_kit/abi_copy.h"
#include "driver_kit/options.h"
#include "handles.h"
#include "math/cpu_isa.h"
#include "math/qgemm.h"
#include "parallel.h"
#include "scheduler.h"
#include "status.h"

namespace accel_emu {

namespace {

bool parse_uint(const std::string& text, uint64_t* out) {
    if (text.empty() || text.size() > 20) return false;
    uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        uint64_t next = v * 10 + (uint64_t)(c - '0');
        if (next / 10 != v) return false;
        v = next;
    }
    *out = v;
    return true;
}

// "256M", "1G", "65536", "64K"
bool parse_bytes(std::string text, uint64_t* out) {
    uint64_t scale = 1;
    if (!text.empty()) {
        char s = text.back();
        if (s == 'K' || s == 'k') scale = 1ull << 10;
        else if (s == 'M' || s == 'm') scale = 1ull << 20;
        else if (s == 'G' || s == 'g') scale = 1ull << 30;
        if (scale != 1) text.pop_back();
    }
    uint64_t v;
    if (!parse_uint(text, &v) || v > (UINT64_MAX / scale)) return false;
    *out = v * scale;
    return true;
}

// The CPUs this process may run on (its affinity mask: a container's or taskset's limit, not the host's).
uint32_t usable_cpus() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return (uint32_t)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

// Unless given: one job on every usable CPU (threads = CPUs / cores, at least 1), so that a device whose
// cores are all busy runs cores * threads host threads, about one per CPU.
uint32_t default_threads(uint32_t cores) {
    const uint32_t t = usable_cpus() / cores;
    return t < 1 ? 1 : t > 256 ? 256 : t;
}

// Unless given: the host's physical memory, within the sizes pool= takes. The pool is address space whose pages
// cost host memory only once touched, so a large default costs nothing, and a model is refused only where the
// host could not hold it (a fixed 256 MiB refused ViT-B/16 and every model of its size).
constexpr uint64_t kMinPool = 64ull << 10, kMaxPool = 64ull << 30, kFallbackPool = 1ull << 30;
uint64_t default_pool() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return kFallbackPool;
    const uint64_t bytes = (uint64_t)pages * (uint64_t)page;
    return bytes < kFallbackPool ? kFallbackPool : bytes > kMaxPool ? kMaxPool : bytes;
}

bool debug_from_environment() {
    const char* v = getenv("ACCEL_EMU_DEBUG");
    return v && v[0] && strcmp(v, "0") != 0;
}

const char* int8_rules_name(Int8Rules r) {
    switch (r) {
        case Int8Rules::Ort: return "ort";
        case Int8Rules::Dpu: return "dpu";
        case Int8Rules::Bpu: return "bpu";
    }
    return "?";
}

// The defaults a hint sets, where cores=, threads= and max_inflight= were not given (explicit wins, as OpenVINO's
// low-level properties over its hints). latency: one core running one job on every usable CPU. throughput: one
// core per usable CPU (at most 64) running a job on one thread each, and room for two jobs per core in flight
// (one running, the next queued) where 16 would not be.
void apply_hint(bool cores_given, bool inflight_given, DeviceOptions* o) {
    if (o->hint == Hint::Throughput) {
        if (!cores_given) o->cores = usable_cpus() > 64 ? 64 : usable_cpus();
        if (o->threads == 0) o->threads = 1;
        if (!inflight_given && o->max_inflight < 2 * o->cores) o->max_inflight = 2 * o->cores;
    }
    if (o->threads == 0) o->threads = default_threads(o->cores);
}

accel_status parse_options(const char* text, DeviceOptions* o) {
    o->cores = 1;
    o->debug = debug_from_environment();
    bool cores_given = false, inflight_given = false;
    for (const accel_kit::OptionItem& item : accel_kit::split_options(text)) {
        const std::string &key = item.key, &value = item.value;
        uint64_t v = 0;
        if (key == "cores") {
            if (!parse_uint(value, &v) || v < 1 || v > 64)
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            format("emu: cores='%s' is not a number from 1 to 64", value.c_str()));
            o->cores = (uint32_t)v;
            cores_given = true;
        } else if (key == "threads") {
            if (!parse_uint(value, &v) || v < 1 || v > 256)
                return fail(
                    ACCEL_ERR_INVALID_ARGUMENT,
                    format("emu: threads='%s' is not a number from 1 to 256 (host threads per core)", value.c_str()));
            o->threads = (uint32_t)v;
        } else if (key == "pool") {
            if (!parse_bytes(value, &v) || v < kMinPool || v > kMaxPool)
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            format("emu: pool='%s' is not a size from 64K to 64G (e.g. pool=256M)", value.c_str()));
            o->pool_bytes = v;
            o->pool_given = true;
        } else if (key == "max_inflight") {
            if (!parse_uint(value, &v) || v < 1 || v > 4096)
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            format("emu: max_inflight='%s' is not a number from 1 to 4096", value.c_str()));
            o->max_inflight = (uint32_t)v;
            inflight_given = true;
        } else if (key == "spin") {
            if (!parse_uint(value, &v) || v > 10000)
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            format("emu: spin='%s' is not a number of microseconds from 0 to 10000", value.c_str()));
            o->spin_us = (uint32_t)v;
        } else if (key == "int8") {
            if (value == "ort") o->int8 = Int8Rules::Ort;
            else if (value == "dpu") o->int8 = Int8Rules::Dpu;
            else if (value == "bpu") o->int8 = Int8Rules::Bpu;
            else
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            format("emu: int8='%s' is not a known rule set (known: ort, dpu, bpu)", value.c_str()));
        } else if (key == "hint") {
            if (value == "latency") o->hint = Hint::Latency;
            else if (value == "throughput") o->hint = Hint::Throughput;
            else
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            format("emu: hint='%s' is not a known hint (known: latency, throughput)", value.c_str()));
        } else if (key == "debug") {
            if (value != "0" && value != "1")
                return fail(ACCEL_ERR_INVALID_ARGUMENT, format("emu: debug='%s' must be 0 or 1", value.c_str()));
            o->debug = value == "1";
        } else {
            return fail(
                ACCEL_ERR_INVALID_ARGUMENT,
                format("emu: unknown option '%s' (known: cores, threads, pool, max_inflight, spin, int8, hint, debug)",
                       item.text.c_str()));
        }
    }
    apply_hint(cores_given, inflight_given, o);
    if (o->pool_bytes == 0) o->pool_bytes = default_pool();
    return ACCEL_OK;
}

}  // namespace

accel_status device_open(const char* options, accel_device** out) {
    DeviceOptions o;
    accel_status s = parse_options(options, &o);
    if (s != ACCEL_OK) return s;
    auto* d = new (std::nothrow) accel_device();
    if (!d) return fail(ACCEL_ERR_OUT_OF_MEMORY, "emu: out of host memory opening the device");
    d->header.driver = &kDriverTable;
    d->options = o;
    d->name = std::string("accel emulator (float: ") + float_isa_name(float_isa_select()) +
              ", int8: " + int8_rules_name(o.int8) + " rules, " + qisa_name(qisa_select()) + ")";
    // A default pool the host will not map at once (a strict overcommit policy counts address space) is halved
    // down to 256 MiB; a pool= the caller gave is that or nothing.
    bool reserved = d->pool.reserve(o.pool_bytes, o.debug);
    while (!reserved && !o.pool_given && o.pool_bytes > (256ull << 20)) {
        o.pool_bytes /= 2;
        reserved = d->pool.reserve(o.pool_bytes, o.debug);
    }
    d->options.pool_bytes = o.pool_bytes;
    if (!reserved) {
        int err = errno;
        delete d;
        return fail(ACCEL_ERR_OUT_OF_MEMORY, format("emu: could not reserve a %llu-byte memory pool: %s",
                                                    (unsigned long long)o.pool_bytes, strerror(err)));
    }
    d->helpers = HelperPool::start(o.cores, o.threads, o.spin_us);
    if (!d->helpers) {
        delete d;
        return fail(ACCEL_ERR_OUT_OF_MEMORY, format("emu: could not start %u helper threads (cores=%u, threads=%u)",
                                                    o.cores * (o.threads - 1), o.cores, o.threads));
    }
    d->scheduler = Scheduler::start(o.cores, o.max_inflight, o.spin_us);
    *out = d;
    return ACCEL_OK;
}

void device_retain(accel_device* d) { d->refs.fetch_add(1); }

void device_release(accel_device* d) {
    if (d->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    d->scheduler->shutdown();
    delete d;
}

accel_status device_get_info(accel_device* d, accel_device_info* out) {
    accel_device_info info{};
    info.cores = d->options.cores;
    info.threads = d->options.threads;
    info.hint = (uint32_t)d->options.hint;
    info.max_inflight = d->options.max_inflight;
    info.debug = d->options.debug ? 1 : 0;
    info.alignment = kAlignment;
    info.pool_bytes = d->pool.capacity();
    info.name = d->name.c_str();
    info.backend = "emu";
    accel_kit::copy_to_caller(info, out);
    return ACCEL_OK;
}

accel_status device_describe(const char* options, accel_device_description* out) {
    DeviceOptions o;
    accel_status s = parse_options(options, &o);  // a bad int8= (or any bad option) fails as opening would
    if (s != ACCEL_OK) return s;
    accel_device_description what{};
    what.flags = ACCEL_DEVICE_HOST_CPUS | ACCEL_DEVICE_INT8_OPTION;
    what.int8_rules = o.int8 == Int8Rules::Dpu   ? ACCEL_INT8_RULES_DPU
                      : o.int8 == Int8Rules::Bpu ? ACCEL_INT8_RULES_BPU
                                                 : ACCEL_INT8_RULES_ORT;
    // model_reader.cc takes every image format of the ABI on a graph input.
    for (accel_image_format f = ACCEL_IMAGE_NV12; f <= ACCEL_IMAGE_BGR; f++) what.image_formats |= 1u << f;
    what.model_format = "accm";
    what.file_suffixes = ".accm";
    what.first_device = "";
    accel_kit::copy_to_caller(what, out);
    return ACCEL_OK;
}

accel_status device_get_stats(accel_device* d, accel_memory_stats* out) {
    PoolStats p = d->pool.stats();
    accel_memory_stats st{};
    st.bytes_in_use = p.bytes_in_use;
    st.peak_bytes_in_use = p.peak_bytes_in_use;
    st.live_buffers = d->live_buffers.load();
    st.allocations = p.allocations;
    st.bytes_copied = d->bytes_copied.load();
    st.jobs_submitted = d->jobs_submitted.load();
    st.jobs_completed = d->jobs_completed.load();
    accel_kit::copy_to_caller(st, out);
    return ACCEL_OK;
}

accel_status device_check(accel_device* d) {
    std::lock_guard<std::mutex> lock(d->check_mutex);
    if (!d->deferred_corruption.empty()) {
        std::string report = d->deferred_corruption;
        d->deferred_corruption.clear();
        return fail(ACCEL_ERR_MEMORY_CORRUPTION, report);
    }
    for (accel_buffer* b : d->live) {
        std::string problem;
        if (!d->pool.check(b->block, &problem))
            return fail(ACCEL_ERR_MEMORY_CORRUPTION, format("buffer #%llu (%llu bytes): %s", (unsigned long long)b->id,
                                                            (unsigned long long)b->size, problem.c_str()));
    }
    return ACCEL_OK;
}

}  // namespace accel_emu
