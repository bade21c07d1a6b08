/* cffi_helpers.c - see cffi_helpers.h: allocation and the one-input, one-output runs of the fast
 * path, over the run core. */
#include "cffi_helpers.h"

accel_status accel_cffi_alloc(accel_device* device, uint64_t nbytes, accel_cffi_allocation* out) {
    accel_buffer* buffer = NULL;
    void* data = NULL;
    uint64_t size = 0;
    accel_status status = accel_buffer_alloc(device, nbytes, &buffer);
    if (status == ACCEL_OK) status = accel_buffer_host_ptr(buffer, &data);
    if (status == ACCEL_OK) status = accel_buffer_size(buffer, &size);
    if (status != ACCEL_OK) {
        accel_buffer_release(buffer); /* void: the failing call's message stays */
        buffer = NULL;
        data = NULL;
        size = 0;
    }
    out->buffer = buffer;
    out->data = (uint8_t*)data;
    out->size = size;
    return status;
}

accel_status accel_cffi_run_1x1(accel_model* model, accel_buffer* input, accel_buffer* output, int32_t priority,
                                uint64_t token) {
    return accel_runcore_run(model, &input, 1, &output, 1, priority, 0, 0, NULL, NULL, token);
}

accel_status accel_cffi_run_copied_1x1(accel_model* model, accel_device* device, const void* src, uint64_t src_bytes,
                                       uint64_t input_bytes, accel_buffer* output, int32_t priority, uint64_t token) {
    accel_buffer* input = NULL;
    accel_status status = accel_buffer_alloc(device, input_bytes, &input);
    if (status == ACCEL_OK) status = accel_buffer_write(input, 0, src, src_bytes);
    if (status != ACCEL_OK) {
        accel_buffer_release(input);
        return status;
    }
    return accel_runcore_run(model, &input, 1, &output, 1, priority, 0, 0, NULL, input, token);
}
