// buffer_checks.cc - see buffer_checks.h.
#include "driver_kit/buffer_checks.h"

#include "driver_kit/buffer_copy.h"

namespace accel_kit {

accel_status check_range(const char* fn, const accel_buffer* b, uint64_t offset, uint64_t size,
                         const BufferRules& rules) {
    if (range_inside(offset, size, rules.bytes(b))) return ACCEL_OK;
    return fail(ACCEL_ERR_INVALID_ARGUMENT, std::string(fn) + ": " + rules.outside(b, offset, size));
}

accel_status check_sync_range(const accel_buffer* b, uint64_t offset, uint64_t* size, const BufferRules& rules) {
    uint64_t total = rules.bytes(b);
    if (*size == 0 && offset <= total) *size = total - offset;
    return check_range("accel_buffer_sync", b, offset, *size, rules);
}

namespace indexed {

std::string count(const char* kind, size_t given, size_t expected) {
    return format("the model has %zu %ss, %zu given", expected, kind, given);
}

std::string null(const JobTensor& t) { return format("%s %zu ('%s') is NULL", t.kind, t.index, t.tensor.name); }

std::string other_device(const JobTensor& t) {
    return format("%s %zu ('%s') is a buffer of another device", t.kind, t.index, t.tensor.name);
}

std::string output_is_input(const JobTensor& output, const JobTensor& input) {
    return format("output %zu ('%s') shares memory with input %zu ('%s')", output.index, output.tensor.name,
                  input.index, input.tensor.name);
}

std::string outputs_shared(const JobTensor& first, const JobTensor& second) {
    return format("outputs %zu ('%s') and %zu ('%s') share memory", first.index, first.tensor.name, second.index,
                  second.tensor.name);
}

}  // namespace indexed

}  // namespace accel_kit
