/* describe: accel_device_describe of every driver the search path holds (argv: the schemes expected, each
 * checked against what its driver really loads), and its bad arguments. Run once on the emulator alone
 * and once beside the stand-in vendor drivers. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <string.h>

#include "test_util.h"

#define ALL_IMAGES                                                                                         \
    (1u << ACCEL_IMAGE_NV12 | 1u << ACCEL_IMAGE_NV12_Y | 1u << ACCEL_IMAGE_NV12_UV | 1u << ACCEL_IMAGE_Y | \
     1u << ACCEL_IMAGE_YUV444 | 1u << ACCEL_IMAGE_RGB | 1u << ACCEL_IMAGE_BGR)

/* What each driver of the tree answers for its bare scheme. */
typedef struct expected {
    const char* uri;
    uint32_t flags;
    accel_int8_rules rules;
    uint32_t images;
    const char* format;
    const char* suffixes;
    const char* first_device;
} expected;

static const expected known[] = {
    {"emu", ACCEL_DEVICE_NODE_TIMES | ACCEL_DEVICE_HOST_CPUS | ACCEL_DEVICE_INT8_OPTION, ACCEL_INT8_RULES_ORT,
     ALL_IMAGES, "accm", ".accm", ""},
    {"bpu", 0, ACCEL_INT8_RULES_BPU,
     1u << ACCEL_IMAGE_NV12 | 1u << ACCEL_IMAGE_Y | 1u << ACCEL_IMAGE_YUV444 | 1u << ACCEL_IMAGE_RGB |
         1u << ACCEL_IMAGE_BGR,
     "hbm", ".bin,.hbm", "0"},
    {"vart", ACCEL_DEVICE_LOADS_SUBGRAPH, ACCEL_INT8_RULES_DPU, 0, "xmodel", ".xmodel", "0"},
};

static accel_device_description describe(const char* uri) {
    accel_device_description d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    accel_status s = accel_device_describe(uri, &d);
    EXPECT(s == ACCEL_OK, "accel_device_describe(\"%s\") = %s (%s)", uri, accel_status_name(s),
           s ? accel_last_error_message() : "");
    return d;
}

static int same(const char* a, const char* b) { return a && b && strcmp(a, b) == 0; }

static void check_driver(const expected* e) {
    accel_device_description d = describe(e->uri);
    EXPECT(d.struct_size == sizeof d, "%s: struct_size changed to %u", e->uri, d.struct_size);
    EXPECT(d.flags == e->flags, "%s: flags 0x%x, expected 0x%x", e->uri, d.flags, e->flags);
    EXPECT(d.int8_rules == e->rules, "%s: int8_rules %d, expected %d", e->uri, d.int8_rules, e->rules);
    EXPECT(d.image_formats == e->images, "%s: image_formats 0x%x, expected 0x%x", e->uri, d.image_formats, e->images);
    EXPECT(same(d.model_format, e->format), "%s: model_format '%s', expected '%s'", e->uri,
           d.model_format ? d.model_format : "(null)", e->format);
    EXPECT(same(d.file_suffixes, e->suffixes), "%s: file_suffixes '%s', expected '%s'", e->uri,
           d.file_suffixes ? d.file_suffixes : "(null)", e->suffixes);
    EXPECT(same(d.first_device, e->first_device), "%s: first_device '%s', expected '%s'", e->uri,
           d.first_device ? d.first_device : "(null)", e->first_device);
}

/* A device without ACCEL_DEVICE_LOADS_SUBGRAPH refuses a subgraph by name, naming its backend; with no name the
 * options load is the plain load. */
static void check_subgraph_refused(void) {
    accel_device* dev = NULL;
    EXPECT_OK(accel_device_open("emu", &dev));
    if (!dev) return;
    accel_load_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.subgraph = "subgraph_conv";
    accel_model* m = NULL;
    EXPECT_STATUS(accel_model_load_memory_with_options(dev, "junk", 4, &o, &m), ACCEL_ERR_UNSUPPORTED);
    EXPECT(strstr(accel_last_error_message(), "backend 'emu'") && strstr(accel_last_error_message(), "subgraph_conv"),
           "the message names neither the backend nor the subgraph: '%s'", accel_last_error_message());
    o.subgraph = NULL;
    EXPECT_STATUS(accel_model_load_memory_with_options(dev, "junk", 4, &o, &m), ACCEL_ERR_MODEL_FORMAT);
    o.struct_size = 4;
    EXPECT_STATUS(accel_model_load_memory_with_options(dev, "junk", 4, &o, &m), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(m == NULL, "a refused load gave a model");
    accel_device_release(dev);
}

static void check_emulator(void) {
    /* The int8 rules follow the URI's option, whatever else it sets. */
    EXPECT(describe("emu:int8=dpu").int8_rules == ACCEL_INT8_RULES_DPU, "emu:int8=dpu is not described as dpu");
    EXPECT(describe("emu:cores=2,int8=bpu").int8_rules == ACCEL_INT8_RULES_BPU, "emu:cores=2,int8=bpu is not bpu");
    EXPECT(describe("emu:int8=ort").int8_rules == ACCEL_INT8_RULES_ORT, "emu:int8=ort is not ort");
    /* Options are checked as accel_device_open checks them. */
    accel_device_description d;
    memset(&d, 0x5a, sizeof d);
    d.struct_size = sizeof d;
    EXPECT_STATUS(accel_device_describe("emu:int8=fp16", &d), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(accel_last_error_message(), "int8='fp16'") != NULL, "the message does not name the option: '%s'",
           accel_last_error_message());
    EXPECT(d.flags == 0x5a5a5a5au, "a failed describe changed *out");
    EXPECT_STATUS(accel_device_describe("emu:cores=0", &d), ACCEL_ERR_INVALID_ARGUMENT);
    /* A caller of a smaller struct gets only the fields it knows: here up to int8_rules. */
    memset(&d, 0x5a, sizeof d);
    d.struct_size = (uint32_t)offsetof(accel_device_description, image_formats);
    EXPECT_OK(accel_device_describe("emu:int8=bpu", &d));
    EXPECT(d.int8_rules == ACCEL_INT8_RULES_BPU && d.image_formats == 0x5a5a5a5au,
           "a smaller struct_size was not respected (int8_rules %d, image_formats 0x%x)", d.int8_rules,
           d.image_formats);
}

static void check_bad_arguments(void) {
    accel_device_description d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    EXPECT_STATUS(accel_device_describe(NULL, &d), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_device_describe("emu", NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_device_describe("", &d), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_device_describe(":cores=2", &d), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(accel_last_error_message(), "no scheme") != NULL, "message: '%s'", accel_last_error_message());
    EXPECT_STATUS(accel_device_describe("nosuch:0", &d), ACCEL_ERR_NOT_FOUND);
    EXPECT(strstr(accel_last_error_message(), "nosuch") != NULL, "the message does not name the scheme: '%s'",
           accel_last_error_message());
    accel_device_description unset;
    memset(&unset, 0, sizeof unset);
    EXPECT_STATUS(accel_device_describe("emu", &unset), ACCEL_ERR_INVALID_ARGUMENT);
}

int main(int argc, char** argv) {
    test_name = "describe";
    for (int i = 1; i < argc; i++) {
        const expected* e = NULL;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (strcmp(known[k].uri, argv[i]) == 0) e = &known[k];
        REQUIRE(e != NULL, "no expected answer for scheme '%s'", argv[i]);
        check_driver(e);
    }
    /* Every usable driver was named: a driver added to the search path gets its expected answer here. */
    size_t count = 0;
    EXPECT_OK(accel_driver_count(&count));
    EXPECT(count == (size_t)(argc - 1), "%zu drivers found, %d named", count, argc - 1);
    check_emulator();
    check_subgraph_refused();
    check_bad_arguments();
    return test_finish();
}
