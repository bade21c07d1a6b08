// rnn.h - ONNX's recurrent layers (RNN, GRU, LSTM; FORMAT.md op rnn): the input projection of every step as
// one GEMM, then per step the recurrent product as one GEMM over the batch and the gate math.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph.h"

namespace accel_emu {

struct RnnSpec {
    RnnCell cell;
    int64_t S, N, I, H, D;  // steps, batch, input size, hidden size, directions (1 or 2)
    bool reverse;           // D == 1: the one direction runs backwards (direction 1 always does)
    bool batch_first;       // layout 1
    bool input_forget;      // LSTM
    bool linear_before_reset;  // GRU
    float clip;             // > 0: gate inputs clipped to [-clip, clip]
    Act act[2][3];          // f, g, h per direction
    float alpha[2][3], beta[2][3];
    // Quantized weights (LSTM; onnxruntime's DynamicQuantizeLSTM): W [D,I,G*H] and R [D,H,G*H], int8 or
    // uint8, zero points per direction, scales per direction and column in RnnData.
    bool quantized;
    bool w_signed, r_signed;
    int32_t w_zero[2], r_zero[2];
};

struct RnnData {
    const float* X;
    const void* W;         // float32, or 8-bit when quantized
    const void* R;
    const float* WS;       // quantized: the scales of W's and R's columns, [D, G*H]
    const float* RS;
    const float* B;        // or nullptr
    const int32_t* L;      // or nullptr
    const float* H0;       // or nullptr
    const float* C0;       // or nullptr
    const float* P;        // or nullptr
    float* Y;              // each output or nullptr
    float* Yh;
    float* Yc;
};

// The gate count G of a cell (1, 3, 4).
int rnn_gates(RnnCell cell);

// Floats of scratch rnn_run needs (the sizes bounded by the caller).
int64_t rnn_scratch_floats(const RnnSpec& s);

// Runs the layer; scratch holds rnn_scratch_floats(s) floats. Sizes fit the BLAS int (the caller checks).
void rnn_run(const RnnSpec& s, const RnnData& d, float* scratch);

}  // namespace accel_emu
