// reduce.h - reductions of a float tensor over any set of axes (ops/reduce.cc: FORMAT.md op 18): mean,
// sum, max, min, prod, sum_square, l1, l2, log_sum_exp.
#pragma once

#include <cstdint>

#include "graph.h"

namespace accel_emu {

class Par;

// The input as runs of dims, outermost first: ext[k] elements, input stride sx[k], output stride sy[k]
// (0 for a reduced run).
struct ReduceRuns {
    int m = 0;
    int64_t ext[kMaxDims], sx[kMaxDims], sy[kMaxDims];
    bool red[kMaxDims];
    int64_t count = 1;  // elements folded into each output
};

// The runs of a tensor shaped dims[0..ndim) reduced over the axes set in `mask` (bit i: axis i).
ReduceRuns reduce_runs(const int64_t* dims, int ndim, int64_t mask);

// y[ny] (the input shape with the reduced axes 1) = fn over the reduced axes of x, shaped as r says.
// log_sum_exp needs ny floats of scratch (each output's max); the others none (scratch may be null).
// Split across par's workers in ranges of outputs (shape only), each output's sum in the same order.
void reduce(ReduceFn fn, const ReduceRuns& r, const float* x, float* y, int64_t ny, float* scratch, const Par& par);

}  // namespace accel_emu
