/* hint: emu:hint=latency|throughput sets cores, threads and max_inflight as OpenVINO's performance hints do (from
 * the CPUs this process may use), an explicit cores=, threads= or max_inflight= wins over it, accel_device_info
 * reports it, and a bad value is refused naming the known ones. */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* The CPUs the emulator divides: this process's affinity mask, as emulator/src/device.cc counts it. */
static uint32_t usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return (uint32_t)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

static accel_device_info info_of(const char* uri) {
    accel_device* d = test_open(uri);
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT_OK(accel_device_get_info(d, &info));
    accel_device_release(d);
    return info;
}

static void expect_device(const char* uri, uint32_t hint, uint32_t cores, uint32_t threads, uint32_t inflight) {
    accel_device_info i = info_of(uri);
    EXPECT(i.hint == hint && i.cores == cores && i.threads == threads && i.max_inflight == inflight,
           "%s: hint %u, cores %u, threads %u, max_inflight %u; expected %u, %u, %u, %u", uri, i.hint, i.cores,
           i.threads, i.max_inflight, hint, cores, threads, inflight);
}

static void expect_refused(const char* uri, const char* value) {
    accel_device* d = NULL;
    accel_status s = accel_device_open(uri, &d);
    if (s == ACCEL_OK) accel_device_release(d);
    const char* m = accel_last_error_message();
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT && strstr(m, value) && strstr(m, "known: latency, throughput"),
           "%s: %s '%s', expected INVALID_ARGUMENT naming '%s' and the known hints", uri, accel_status_name(s),
           s == ACCEL_OK ? "" : m, value);
    /* accel_device_describe reads the options as opening does */
    accel_device_description what;
    memset(&what, 0, sizeof what);
    what.struct_size = sizeof what;
    EXPECT_STATUS(accel_device_describe(uri, &what), ACCEL_ERR_INVALID_ARGUMENT);
}

int main(void) {
    const uint32_t cpus = usable_cpus();
    const uint32_t per_cpu = cpus > 64 ? 64 : cpus;  /* one core per CPU, within cores= range */
    const uint32_t two_per_core = 2 * per_cpu > 16 ? 2 * per_cpu : 16;
    const uint32_t all = cpus > 256 ? 256 : cpus;

    /* latency, the default: one core running each job on every usable CPU */
    expect_device("emu", ACCEL_HINT_LATENCY, 1, all, 16);
    expect_device("emu:hint=latency", ACCEL_HINT_LATENCY, 1, all, 16);
    /* throughput: one core per CPU on one thread each, two jobs per core in flight */
    expect_device("emu:hint=throughput", ACCEL_HINT_THROUGHPUT, per_cpu, 1, two_per_core);
    /* the last hint= wins, as for every repeated option */
    expect_device("emu:hint=latency,hint=throughput", ACCEL_HINT_THROUGHPUT, per_cpu, 1, two_per_core);
    /* explicit options win, in either order */
    expect_device("emu:hint=throughput,cores=3", ACCEL_HINT_THROUGHPUT, 3, 1, 16);
    expect_device("emu:cores=12,hint=throughput", ACCEL_HINT_THROUGHPUT, 12, 1, 24);
    expect_device("emu:hint=throughput,threads=2", ACCEL_HINT_THROUGHPUT, per_cpu, 2, two_per_core);
    expect_device("emu:hint=throughput,max_inflight=3", ACCEL_HINT_THROUGHPUT, per_cpu, 1, 3);
    expect_device("emu:hint=throughput,cores=2,threads=3,max_inflight=5", ACCEL_HINT_THROUGHPUT, 2, 3, 5);
    expect_device("emu:hint=latency,cores=2", ACCEL_HINT_LATENCY, 2, cpus / 2 ? (cpus / 2 > 256 ? 256 : cpus / 2) : 1,
                  16);
    expect_device("emu:hint=latency,threads=1", ACCEL_HINT_LATENCY, 1, 1, 16);

    expect_refused("emu:hint=fast", "hint='fast'");
    expect_refused("emu:hint=", "hint=''");
    expect_refused("emu:hint=Throughput", "hint='Throughput'");
    expect_refused("emu:cores=2,hint=latency ", "hint='latency '");
    /* the unknown-option message lists hint among the known ones */
    accel_device* d = NULL;
    EXPECT_STATUS(accel_device_open("emu:hints=latency", &d), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(accel_last_error_message(), "hint,") != NULL, "unknown option message: '%s'",
           accel_last_error_message());

    /* A caller built against ABI 1.4 or before (the member was `reserved`) sees the struct unchanged in size; one
     * whose struct ends before it gets nothing written there. */
    accel_device* dev = test_open("emu:hint=throughput");
    unsigned char raw[sizeof(accel_device_info)];
    memset(raw, 0xA5, sizeof raw);
    uint32_t before = (uint32_t)offsetof(accel_device_info, hint);
    memcpy(raw, &before, sizeof before);
    EXPECT_OK(accel_device_get_info(dev, (accel_device_info*)(void*)raw));
    for (size_t i = before; i < sizeof raw; i++)
        EXPECT(raw[i] == 0xA5, "accel_device_get_info wrote byte %zu past struct_size %u", i, before);
    accel_device_release(dev);
    return test_finish();
}
