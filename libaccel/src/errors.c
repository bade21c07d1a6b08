/* errors.c - the per-thread last error message and status names. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

enum { MESSAGE_CAPACITY = 1024 };

static _Thread_local char last_message[MESSAGE_CAPACITY];
static _Thread_local accel_status last_status = ACCEL_OK;
static _Thread_local int error_set_in_call;

void accel_set_error(accel_status status, const char* message) {
    last_status = status;
    if (!message) message = "";
    /* Truncation keeps the message a valid C string; it is a human-readable diagnostic. */
    snprintf(last_message, sizeof last_message, "%s", message);
    error_set_in_call = 1;
}

accel_status accel_fail(accel_status status, const char* fmt, ...) {
    char buffer[MESSAGE_CAPACITY];
    va_list args;
    va_start(args, fmt);
    vsnprintf(buffer, sizeof buffer, fmt, args);
    va_end(args);
    accel_set_error(status, buffer);
    return status;
}

void accel_error_begin_call(void) { error_set_in_call = 0; }
int accel_error_was_set(void) { return error_set_in_call; }

ACCEL_API const char* accel_last_error_message(void) { return last_message; }
ACCEL_API accel_status accel_last_error_status(void) { return last_status; }

ACCEL_API const char* accel_status_name(accel_status status) {
    switch (status) {
        case ACCEL_OK: return "ACCEL_OK";
        case ACCEL_ERR_INVALID_ARGUMENT: return "ACCEL_ERR_INVALID_ARGUMENT";
        case ACCEL_ERR_SHAPE: return "ACCEL_ERR_SHAPE";
        case ACCEL_ERR_DTYPE: return "ACCEL_ERR_DTYPE";
        case ACCEL_ERR_ALIGNMENT: return "ACCEL_ERR_ALIGNMENT";
        case ACCEL_ERR_MODEL_FORMAT: return "ACCEL_ERR_MODEL_FORMAT";
        case ACCEL_ERR_OUT_OF_MEMORY: return "ACCEL_ERR_OUT_OF_MEMORY";
        case ACCEL_ERR_BUSY: return "ACCEL_ERR_BUSY";
        case ACCEL_ERR_TIMEOUT: return "ACCEL_ERR_TIMEOUT";
        case ACCEL_ERR_UNSUPPORTED: return "ACCEL_ERR_UNSUPPORTED";
        case ACCEL_ERR_DEVICE: return "ACCEL_ERR_DEVICE";
        case ACCEL_ERR_NOT_FOUND: return "ACCEL_ERR_NOT_FOUND";
        case ACCEL_ERR_CANCELLED: return "ACCEL_ERR_CANCELLED";
        case ACCEL_ERR_NOT_READY: return "ACCEL_ERR_NOT_READY";
        case ACCEL_ERR_ABI_MISMATCH: return "ACCEL_ERR_ABI_MISMATCH";
        case ACCEL_ERR_MEMORY_CORRUPTION: return "ACCEL_ERR_MEMORY_CORRUPTION";
        case ACCEL_ERR_CLOSED: return "ACCEL_ERR_CLOSED";
        case ACCEL_ERR_INTERNAL: return "ACCEL_ERR_INTERNAL";
        default: return "ACCEL_ERR_UNKNOWN";
    }
}
