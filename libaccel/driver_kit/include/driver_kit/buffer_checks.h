// buffer_checks.h - the buffer checks every driver makes before its runtime sees a buffer: a byte range
// of one (accel_buffer_sync, _write, _read), and the buffers of a submitted job (their count, NULL, a
// buffer of another device or driver, one smaller than its tensor's byte_size, an output whose memory
// overlaps an input's or another output's); and accel_buffer_host_ptr / _size, which need nothing else.
//
// The kit decides what is wrong and with which status; the driver words the message, because callers
// and tests read each driver's messages as they are. A driver's buffers and models begin with
// `header` and hold their `device`; a model has `input_infos` and `output_infos`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "accel/driver.h"
#include "driver_kit/status.h"

namespace accel_kit {

// What the kit needs of a driver's buffers, and the driver's words for a range outside one.
struct BufferRules {
    void* (*memory)(const accel_buffer* b);  // the host-visible pointer; two buffers with the same one alias
    uint64_t (*bytes)(const accel_buffer* b);  // the usable size
    // The message, after "<function>: ", for bytes [offset, offset + size) not all inside b.
    std::string (*outside)(const accel_buffer* b, uint64_t offset, uint64_t size);
};

// The rules of a buffer type whose host pointer and usable size are its `host` and `size` members.
template <class Buffer>
constexpr BufferRules member_rules(std::string (*outside)(const accel_buffer* b, uint64_t offset, uint64_t size)) {
    return {[](const accel_buffer* b) -> void* { return static_cast<const Buffer*>(b)->host; },
            [](const accel_buffer* b) -> uint64_t { return static_cast<const Buffer*>(b)->size; }, outside};
}

// A buffer of a job as its messages name it: the model's "input" or "output" `index`, of `tensor`.
struct JobTensor {
    const char* kind;
    size_t index;
    const accel_tensor_info& tensor;
};

// The driver's words, after "accel_job_submit: ", for what check_job_buffers finds.
struct JobBufferWording {
    std::string (*count)(const char* kind, size_t given, size_t expected);
    std::string (*null)(const JobTensor& t);
    std::string (*other_device)(const JobTensor& t);
    std::string (*too_small)(const JobTensor& t, const accel_buffer* b, uint64_t bytes);
    std::string (*output_is_input)(const JobTensor& output, const JobTensor& input);
    std::string (*outputs_shared)(const JobTensor& first, const JobTensor& second);
};

// The wording of the emulator and the bpu driver, which name a buffer by index and tensor ("input 0
// ('x') is NULL"), with the driver's own words for a buffer too small.
namespace indexed {
std::string count(const char* kind, size_t given, size_t expected);
std::string null(const JobTensor& t);
std::string other_device(const JobTensor& t);
std::string output_is_input(const JobTensor& output, const JobTensor& input);
std::string outputs_shared(const JobTensor& first, const JobTensor& second);
}  // namespace indexed

constexpr JobBufferWording indexed_wording(std::string (*too_small)(const JobTensor& t, const accel_buffer* b,
                                                                    uint64_t bytes)) {
    return {indexed::count,           indexed::null,          indexed::other_device, too_small,
            indexed::output_is_input, indexed::outputs_shared};
}

inline accel_status buffer_host_ptr(const accel_buffer* b, void** out, const BufferRules& rules) {
    *out = rules.memory(b);
    return ACCEL_OK;
}

inline accel_status buffer_size(const accel_buffer* b, uint64_t* out, const BufferRules& rules) {
    *out = rules.bytes(b);
    return ACCEL_OK;
}

// ACCEL_ERR_INVALID_ARGUMENT unless bytes [offset, offset + size) all lie in b; `fn` names the ABI call.
accel_status check_range(const char* fn, const accel_buffer* b, uint64_t offset, uint64_t size,
                         const BufferRules& rules);

// accel_buffer_sync's range, where size 0 means "to the end": *size becomes the bytes it stands for.
accel_status check_sync_range(const accel_buffer* b, uint64_t offset, uint64_t* size, const BufferRules& rules);

namespace detail {

template <class Model, class Buffer, class Infos>
accel_status check_side(const Model* m, Buffer* const* given, size_t count, const Infos& infos, const char* kind,
                        const BufferRules& rules, const JobBufferWording& words) {
    if (count != infos.size())
        return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_job_submit: " + words.count(kind, count, infos.size()));
    for (size_t i = 0; i < count; i++) {
        const Buffer* b = given[i];
        JobTensor t{kind, i, infos[i]};
        if (!b) return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_job_submit: " + words.null(t));
        // Another driver's buffer is not even of our type: its header tells, before anything else is read.
        if (b->header.driver != m->header.driver || b->device != m->device)
            return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_job_submit: " + words.other_device(t));
        uint64_t bytes = rules.bytes(b);
        if (bytes < infos[i].byte_size)
            return fail(ACCEL_ERR_SHAPE, "accel_job_submit: " + words.too_small(t, b, bytes));
    }
    return ACCEL_OK;
}

}  // namespace detail

namespace detail {

// True if the bytes a job touches in a and b overlap: [memory, memory + bytes), an empty tensor counting as
// one byte, so that two handles of one memory are refused whatever the tensors' sizes.
inline bool overlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
    const uintptr_t pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
    const uint64_t na = a_bytes ? a_bytes : 1, nb = b_bytes ? b_bytes : 1;
    return pa < pb ? pb - pa < na : pa - pb < nb;
}

}  // namespace detail

// The buffers of a job of model m, checked against its tensors, inputs first. Aliasing is by memory
// ranges, not by handle nor by start address: an output that shares any byte of its tensor with an input
// or another output would be overwritten while it is read, whatever the handles (two imports of one
// caller array at different offsets overlap without sharing a start).
template <class Model, class Buffer>
accel_status check_job_buffers(const Model* m, Buffer* const* inputs, size_t nin, Buffer* const* outputs, size_t nout,
                               const BufferRules& rules, const JobBufferWording& words) {
    accel_status s = detail::check_side(m, inputs, nin, m->input_infos, "input", rules, words);
    if (s == ACCEL_OK) s = detail::check_side(m, outputs, nout, m->output_infos, "output", rules, words);
    if (s != ACCEL_OK) return s;
    for (size_t o = 0; o < nout; o++) {
        JobTensor out{"output", o, m->output_infos[o]};
        const void* memory = rules.memory(outputs[o]);
        const uint64_t bytes = m->output_infos[o].byte_size;
        for (size_t i = 0; i < nin; i++)
            if (detail::overlap(rules.memory(inputs[i]), m->input_infos[i].byte_size, memory, bytes))
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_job_submit: " + words.output_is_input(out, {"input", i, m->input_infos[i]}));
        for (size_t p = 0; p < o; p++)
            if (detail::overlap(rules.memory(outputs[p]), m->output_infos[p].byte_size, memory, bytes))
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            "accel_job_submit: " + words.outputs_shared({"output", p, m->output_infos[p]}, out));
    }
    return ACCEL_OK;
}

}  // namespace accel_kit
