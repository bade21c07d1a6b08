/* fuzz_model.h - what the fuzz target and the regression replay do with a model that loaded. */
#ifndef ACCEL_FUZZ_MODEL_H
#define ACCEL_FUZZ_MODEL_H

#include <accel/accel.h>

#include <stdint.h>

/* Describes every input and output, and runs the model once on zeroed inputs if the inputs and
 * outputs together take at most run_limit bytes. Returns 0 (and prints why) if anything fails that
 * must not fail for a loaded model. */
int fuzz_exercise_model(accel_device* device, accel_model* model, uint64_t run_limit);

#endif
