/* internal.h - what libaccel's own files share; nothing here is exported. */
#ifndef ACCEL_INTERNAL_H
#define ACCEL_INTERNAL_H

#include "accel/driver.h"

/* errors.c: the per-thread last error. */
void accel_set_error(accel_status status, const char* message);
accel_status accel_fail(accel_status status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks the start of a driver call so that a driver failure without a message still gets one. */
void accel_error_begin_call(void);
int accel_error_was_set(void);

/* loader.c: the drivers found. */
/* Finds the driver for `scheme` (length `len`). On failure sets the error and returns NULL. */
const accel_driver_table* accel_find_driver(const char* scheme, size_t len, accel_status* status);
size_t accel_usable_driver_count(void);
const accel_driver_table* accel_usable_driver(size_t index);

/* uri.c: the scheme of a device URI (its length) and its options (after the ':', or "" without one);
 * ACCEL_ERR_INVALID_ARGUMENT, in the words of `fn`, for a URI with no scheme. */
accel_status accel_uri_scheme(const char* uri, const char* fn, size_t* out_length, const char** out_options);

#endif
