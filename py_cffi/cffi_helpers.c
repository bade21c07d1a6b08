/* cffi_helpers.c - see cffi_helpers.h: the owners of handles and of device memory, and the one-input,
 * one-output runs of the fast path, over the run core. */
#include "cffi_helpers.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void* accel_cffi_owner_alloc(size_t size) { return calloc(1, size); }

void accel_cffi_free_device_box(void* box) {
    accel_device_release(*(accel_device**)box);
    free(box);
}

void accel_cffi_free_model_box(void* box) {
    accel_model_release(*(accel_model**)box);
    free(box);
}

void accel_cffi_free_job_box(void* box) {
    accel_job_release(*(accel_job**)box);
    free(box);
}

void accel_cffi_free_buffer_box(void* box) {
    accel_buffer_release(*(accel_buffer**)box);
    free(box);
}

/* ---- device memory owned by cffi arrays ---- */

enum { REGISTRY_BUCKETS = 4096 };

typedef struct registered {
    const void* data;
    accel_buffer* buffer;
    struct registered* next;
} registered;

static registered* registry[REGISTRY_BUCKETS];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local accel_device* t_target;
static _Thread_local uint64_t t_request; /* the bytes to ask the device for */
static _Thread_local uint32_t t_alignment; /* of t_target */
static _Thread_local accel_status t_status;
static _Thread_local accel_buffer* t_last; /* of the last allocation on this thread */

static size_t bucket_of(const void* data) { return ((uintptr_t)data >> 6) % REGISTRY_BUCKETS; }

/* Held across fork(), so that a child never inherits it locked by a thread it does not have. */
static void lock_registry(void) { pthread_mutex_lock(&registry_lock); }
static void unlock_registry(void) { pthread_mutex_unlock(&registry_lock); }
__attribute__((constructor)) static void watch_forks(void) {
    pthread_atfork(lock_registry, unlock_registry, unlock_registry);
}

uint32_t accel_cffi_memory_target(accel_device* device, uint64_t nbytes) {
    t_request = nbytes;
    if (device == t_target && t_alignment) return t_alignment; /* the usual case: the same device again */
    t_target = device;
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    t_alignment = accel_device_get_info(device, &info) == ACCEL_OK ? info.alignment : 0;
    return t_alignment;
}

void* accel_cffi_memory_alloc(size_t size) {
    (void)size; /* the request rounded up to the alignment: the buffer's usable size (accel.h) */
    accel_buffer* buffer = NULL;
    void* data = NULL;
    registered* entry = (registered*)malloc(sizeof *entry);
    /* The exact request, not `size`: a device may treat a buffer larger than its tensor otherwise (the
     * vart driver then copies the output through a buffer of its own). */
    t_status = entry ? accel_buffer_alloc(t_target, t_request, &buffer) : ACCEL_ERR_OUT_OF_MEMORY;
    if (t_status == ACCEL_OK) t_status = accel_buffer_host_ptr(buffer, &data);
    if (t_status != ACCEL_OK) {
        accel_buffer_release(buffer); /* void: the failing call's message stays */
        free(entry);
        return NULL;
    }
    entry->data = data;
    entry->buffer = buffer;
    t_last = buffer;
    lock_registry();
    entry->next = registry[bucket_of(data)];
    registry[bucket_of(data)] = entry;
    unlock_registry();
    return data;
}

static registered* unlink_entry(const void* data) {
    for (registered** link = &registry[bucket_of(data)]; *link; link = &(*link)->next) {
        if ((*link)->data == data) {
            registered* found = *link;
            *link = found->next;
            return found;
        }
    }
    return NULL;
}

void accel_cffi_memory_free(void* data) {
    lock_registry();
    registered* entry = unlink_entry(data);
    unlock_registry();
    if (!entry) return;
    accel_buffer_release(entry->buffer);
    free(entry);
}

accel_status accel_cffi_memory_status(void) { return t_status; }

accel_buffer* accel_cffi_memory_last(void) { return t_last; }

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
