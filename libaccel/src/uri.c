/* uri.c - device URIs ("<scheme>[:<options>]") for libaccel: accel_device_open and accel_device_describe
 * find the driver through accel_uri_scheme, and accel_uri_parse hands the split to callers. The grammar
 * itself is common/uri_grammar.c, which the drivers' kit compiles too. */
#include <string.h>

#include "internal.h"
#include "uri_grammar.h"

accel_status accel_uri_scheme(const char* uri, const char* fn, size_t* out_length, const char** out_options) {
    const char* options = NULL;
    size_t length = accel_uri_grammar_scheme(uri, &options);
    if (length == 0)
        return accel_fail(ACCEL_ERR_INVALID_ARGUMENT,
                          "%s: URI '%.200s' has no scheme (expected e.g. 'emu' or 'emu:cores=2')", fn, uri);
    *out_length = length;
    *out_options = options;
    return ACCEL_OK;
}

ACCEL_API accel_status accel_uri_parse(const char* uri, accel_uri_item* items, size_t capacity, size_t* out_count) {
    if (!uri) return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_uri_parse: uri is NULL");
    if (!out_count) return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_uri_parse: out_count is NULL");
    if (capacity && !items)
        return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_uri_parse: items is NULL with capacity %zu", capacity);
    size_t scheme_length = 0;
    const char* options = NULL;
    accel_status status = accel_uri_scheme(uri, "accel_uri_parse", &scheme_length, &options);
    if (status != ACCEL_OK) return status;
    accel_uri_item scheme;
    memset(&scheme, 0, sizeof scheme);
    scheme.key_length = scheme_length;
    if (capacity) items[0] = scheme;
    size_t rest = capacity ? capacity - 1 : 0;
    *out_count = 1 + accel_uri_grammar_items(uri, options, strlen(options), rest ? items + 1 : NULL, rest);
    return ACCEL_OK;
}
