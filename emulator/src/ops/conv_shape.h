// conv_shape.h - what conv, qconv and convinteger (FORMAT.md ops 1, 29, 40) share: the geometry of a node, read from
// its parameters and its tensors' shapes, and the load-time checks of both against each other.
#pragma once

#include <string>

#include "graph.h"
#include "math/conv_geom.h"

namespace accel_emu {
namespace kern {

// The geometry of a validated conv or qconv node (every field but `tile`, which is 0).
ConvGeom conv_geometry(const Graph& g, const Node& n);

// Ranks, constant weights and bias (conv, qconv: input 2), group, kernel and window against the input, weight, bias and
// output shapes; on failure "<op>: <problem>" in *err and false. Fills *q (as conv_geometry) when it succeeds.
bool check_conv_shapes(const Graph& g, const Node& n, const char* op, ConvGeom* q, std::string* err);

}  // namespace kern
}  // namespace accel_emu
