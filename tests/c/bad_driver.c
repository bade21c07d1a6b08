/* bad_driver.c - a test-only driver built for an ABI that does not exist (99.0): the loader must refuse
 * it with ACCEL_ERR_ABI_MISMATCH. Built as libaccel_driver_bad.so in a folder of its own. */
#include <accel/driver.h>

static const accel_driver_table bad_table = {
    .struct_size = sizeof(accel_driver_table),
    .abi_version = (uint32_t)99 << 16, /* ABI 99.0 */
    .scheme = "bad",
    .description = "a driver for an ABI from the future (tests only)",
    /* every function pointer NULL: the loader must never call one */
};

ACCEL_DRIVER_EXPORT accel_status accel_driver_entry(uint32_t loader_abi_version, const accel_host_api* host,
                                                    const accel_driver_table** out_table) {
    (void)loader_abi_version;
    (void)host;
    *out_table = &bad_table;
    return ACCEL_OK;
}
