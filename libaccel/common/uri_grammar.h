/* uri_grammar.h - the grammar of device URIs ("<scheme>[:<options>]"), written once and compiled into
 * libaccel (accel_uri_parse, accel_device_open) and into every driver through the driver kit
 * (accel_kit::split_options). Drivers do not link libaccel (and may run under an older 1.x one), so
 * they carry their own hidden copy of this code rather than calling it. */
#ifndef ACCEL_URI_GRAMMAR_H
#define ACCEL_URI_GRAMMAR_H

#include <stddef.h>

#include "accel/accel.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define ACCEL_URI_GRAMMAR_HIDDEN
#else
#define ACCEL_URI_GRAMMAR_HIDDEN __attribute__((visibility("hidden")))
#endif

/* The length of the scheme of `uri` (the bytes before its first ':', or all of it; 0 if it has none)
 * and, in *out_options, where its options begin (after the ':', or its terminating NUL). */
ACCEL_URI_GRAMMAR_HIDDEN size_t accel_uri_grammar_scheme(const char* uri, const char** out_options);

/* The comma-separated items of the `length` bytes of `options`, empty ones included ("a,,b" gives
 * three, "a," two) and none when `length` is 0, each split at its first '=': offsets count from
 * `base` (the URI for accel_uri_parse, the options themselves for the kit). Returns the item count
 * and writes the first min(capacity, count) items. */
ACCEL_URI_GRAMMAR_HIDDEN size_t accel_uri_grammar_items(const char* base, const char* options, size_t length,
                                                        accel_uri_item* items, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_URI_GRAMMAR_H */
