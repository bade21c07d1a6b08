/* uri_grammar.c - see uri_grammar.h. */
#include "uri_grammar.h"

#include <string.h>

size_t accel_uri_grammar_scheme(const char* uri, const char** out_options) {
    const char* colon = strchr(uri, ':');
    size_t length = colon ? (size_t)(colon - uri) : strlen(uri);
    *out_options = colon ? colon + 1 : uri + length;
    return length;
}

static accel_uri_item item_of(const char* base, const char* start, size_t length) {
    accel_uri_item item;
    memset(&item, 0, sizeof item);
    const char* eq = memchr(start, '=', length);
    item.key_offset = (uint64_t)(start - base);
    item.key_length = eq ? (uint64_t)(eq - start) : length;
    if (eq) {
        item.has_value = 1;
        item.value_offset = (uint64_t)(eq + 1 - base);
        item.value_length = (uint64_t)(start + length - eq - 1);
    }
    return item;
}

size_t accel_uri_grammar_items(const char* base, const char* options, size_t length, accel_uri_item* items,
                               size_t capacity) {
    if (length == 0) return 0;
    size_t count = 0;
    const char* end = options + length;
    for (const char* start = options;;) {
        const char* comma = memchr(start, ',', (size_t)(end - start));
        const char* stop = comma ? comma : end;
        if (count < capacity) items[count] = item_of(base, start, (size_t)(stop - start));
        count++;
        if (!comma) return count;
        start = comma + 1;
    }
}
