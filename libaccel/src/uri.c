/* uri.c - the one parser of device URIs ("<scheme>[:<options>]"): accel_device_open and
 * accel_device_describe find the driver through it, and accel_uri_parse hands its split to callers. */
#include <string.h>

#include "internal.h"

accel_status accel_uri_scheme(const char* uri, const char* fn, size_t* out_length, const char** out_options) {
    const char* colon = strchr(uri, ':');
    size_t length = colon ? (size_t)(colon - uri) : strlen(uri);
    if (length == 0)
        return accel_fail(ACCEL_ERR_INVALID_ARGUMENT,
                          "%s: URI '%.200s' has no scheme (expected e.g. 'emu' or 'emu:cores=2')", fn, uri);
    *out_length = length;
    *out_options = colon ? colon + 1 : uri + length;
    return ACCEL_OK;
}

static accel_uri_item item_of(const char* uri, const char* start, size_t length) {
    accel_uri_item item;
    memset(&item, 0, sizeof item);
    const char* eq = memchr(start, '=', length);
    item.key_offset = (uint64_t)(start - uri);
    item.key_length = eq ? (uint64_t)(eq - start) : length;
    if (eq) {
        item.has_value = 1;
        item.value_offset = (uint64_t)(eq + 1 - uri);
        item.value_length = (uint64_t)(start + length - eq - 1);
    }
    return item;
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
    size_t count = 0;
    accel_uri_item scheme;
    memset(&scheme, 0, sizeof scheme);
    scheme.key_length = scheme_length;
    if (count < capacity) items[count] = scheme;
    count++;
    /* The comma-separated items of the options, empty ones included; none for "". */
    for (const char* start = options; *options != '\0';) {
        const char* comma = strchr(start, ',');
        size_t length = comma ? (size_t)(comma - start) : strlen(start);
        if (count < capacity) items[count] = item_of(uri, start, length);
        count++;
        if (!comma) break;
        start = comma + 1;
    }
    *out_count = count;
    return ACCEL_OK;
}
