// model_reader.h - parses and validates an .accm image (FORMAT.md) into a Graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graph.h"

namespace accel_emu {

// Validates every offset, size, count, dtype, shape and graph rule of FORMAT.md, including each node's
// op-level check (find_op(op)->validate), before anything is used. Never reads outside [data, data+size).
// On success fills *graph and sets *data_section_offset to where the data section starts in `data`
// (graph->weights_bytes is its size; constants' data_offset are relative to it) and returns true.
// On failure returns false with *error describing the first problem found (field and value, and the
// tensor or node name when known); *graph is then unspecified.
bool read_model(const uint8_t* data, size_t size, Graph* graph, uint64_t* data_section_offset, std::string* error);

}  // namespace accel_emu
