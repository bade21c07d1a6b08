/* runcore_match.c - what both fast paths check of a call's buffers, written once (accel_runcore.h). */
#include "accel_runcore.h"

int accel_runcore_outputs_alias(accel_buffer* const* inputs, size_t input_count, accel_buffer* const* outputs,
                                size_t output_count) {
    for (size_t o = 0; o < output_count; o++) {
        for (size_t i = 0; i < input_count; i++)
            if (inputs[i] == outputs[o]) return 1;
        for (size_t p = 0; p < o; p++)
            if (outputs[p] == outputs[o]) return 1;
    }
    return 0;
}
