// rnn.h - ONNX's recurrent layers (RNN, GRU, LSTM; FORMAT.md op rnn): the input projection of every step as
// one GEMM, then per step the recurrent product as one GEMM over the batch and the gate math.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph.h"
#include "math/qgemm.h"

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
    // uint8, zero points per direction, scales per direction and column in RnnData; their products run on
    // the int8 GEMM (RnnPacked).
    bool quantized;
    bool w_signed, r_signed;
    int32_t w_zero[2], r_zero[2];
};

// The quantized weights of each direction as the int8 GEMM takes them (math/qgemm.h): W and R transposed to
// G*H rows of I (or H) and packed with their zero point and int32 output, A's zero point 0; and each row's
// sum_k (w - zero), which a product subtracts A's zero point times (the zero point is known only per run).
struct RnnPacked {
    const void* w[2];
    const void* r[2];
    const int32_t* w_sums[2];
    const int32_t* r_sums[2];
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
    RnnPacked packed;      // quantized
    void* gemm_scratch;    // quantized: the int8 GEMM's scratch (ops/rnn.cc sizes it for every path)
};

// The gate count G of a cell (1, 3, 4).
int rnn_gates(RnnCell cell);

// Floats of scratch rnn_run needs (the sizes bounded by the caller).
int64_t rnn_scratch_floats(const RnnSpec& s);

// Quantized: the int8 GEMM's spec of W (or, recurrent, R) of s, without its arrays (for sizes and packing).
QGemmSpec rnn_gemm_spec(const RnnSpec& s, bool recurrent);

// Runs the layer; scratch holds rnn_scratch_floats(s) floats. Sizes fit the BLAS int (the caller checks).
void rnn_run(const RnnSpec& s, const RnnData& d, float* scratch);

}  // namespace accel_emu
