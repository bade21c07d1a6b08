// uri_grammar: libaccel's accel_uri_parse and the driver kit's accel_kit::split_options are one grammar
// (libaccel/common/uri_grammar.c, compiled into both): on a table of tricky URIs they give the same items,
// and the kit's items are the ones the grammar promises.
#include <accel/accel.h>

#include <cstdio>
#include <string>
#include <vector>

#include "driver_kit/options.h"

namespace {

int failures = 0;

#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (!(cond)) {                                                \
            std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            std::fprintf(stderr, __VA_ARGS__);                        \
            std::fprintf(stderr, "\n");                               \
            failures++;                                               \
        }                                                             \
    } while (0)

// One option item written "key" (no '=') or "key=value", the way a test states what it expects.
std::string written(const accel_kit::OptionItem& item) {
    return item.has_value ? item.key + "=" + item.value : item.key;
}

// Both splits of `uri` agree item by item, and the options are `want` ("key" or "key=value" each).
void expect_agree(const char* uri, const std::vector<std::string>& want) {
    size_t count = 0;
    accel_status s = accel_uri_parse(uri, nullptr, 0, &count);
    CHECK(s == ACCEL_OK, "accel_uri_parse(\"%s\") = %s", uri, accel_status_name(s));
    if (s != ACCEL_OK) return;
    std::vector<accel_uri_item> items(count);
    CHECK(accel_uri_parse(uri, items.data(), items.size(), &count) == ACCEL_OK, "accel_uri_parse(\"%s\")", uri);
    // What the loader hands the driver: the text after the scheme and its ':'.
    const char* after_scheme = uri + items[0].key_length;
    std::vector<accel_kit::OptionItem> kit = accel_kit::split_options(*after_scheme ? after_scheme + 1 : "");
    CHECK(kit.size() + 1 == count, "\"%s\": the kit splits %zu options, accel_uri_parse %zu", uri, kit.size(),
          count - 1);
    CHECK(kit.size() == want.size(), "\"%s\": the kit splits %zu options, expected %zu", uri, kit.size(), want.size());
    for (size_t i = 0; i < kit.size() && i + 1 < count; i++) {
        const accel_uri_item& item = items[i + 1];
        std::string key(uri + item.key_offset, item.key_length);
        std::string value(uri + item.value_offset, item.value_length);
        CHECK(kit[i].key == key, "\"%s\" item %zu: kit key '%s', accel_uri_parse '%s'", uri, i, kit[i].key.c_str(),
              key.c_str());
        CHECK(kit[i].has_value == (item.has_value != 0), "\"%s\" item %zu: has_value differs", uri, i);
        CHECK(kit[i].value == value, "\"%s\" item %zu: kit value '%s', accel_uri_parse '%s'", uri, i,
              kit[i].value.c_str(), value.c_str());
        CHECK(kit[i].text == written(kit[i]), "\"%s\" item %zu: text '%s' is not the item '%s'", uri, i,
              kit[i].text.c_str(), written(kit[i]).c_str());
        if (i < want.size())
            CHECK(written(kit[i]) == want[i], "\"%s\" item %zu: '%s', expected '%s'", uri, i, written(kit[i]).c_str(),
                  want[i].c_str());
    }
}

}  // namespace

int main() {
    expect_agree("emu", {});
    expect_agree("emu:", {});
    expect_agree("emu:cores=2,int8=dpu", {"cores=2", "int8=dpu"});
    expect_agree("bpu:0,cores=2", {"0", "cores=2"});
    expect_agree("emu:cores=2,", {"cores=2", ""});  // a trailing comma is an empty last item
    expect_agree("emu:,", {"", ""});
    expect_agree("emu:a,,b=", {"a", "", "b="});  // '=' with nothing after it: value ""
    expect_agree("emu:=", {"="});                // an empty key with an empty value
    expect_agree("emu:=x,y", {"=x", "y"});
    expect_agree("x:k=v=w, sp = 1 ", {"k=v=w", " sp = 1 "});  // the first '=' splits; nothing trimmed
    expect_agree("vart:path=a:b,c", {"path=a:b", "c"});      // only the first ':' ends the scheme
    expect_agree("emu:,,,", {"", "", "", ""});
    if (failures) {
        std::fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    std::printf("uri_grammar: ok\n");
    return 0;
}
