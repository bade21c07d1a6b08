// xmodel_messages.h - the messages of XIR's serialized graph (package serial_v2; field numbers from XIR's published
// graph_proto_v2.proto) as the stand-in's libxir parses them from the wire, before they become xir::Graph: what
// xmodel_messages.cc fills and xmodel_reader.cc checks and builds from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wire.h"
#include "xir/attrs/attrs.hpp"

namespace standin_xir {

using AttrMap = std::map<std::string, xir::Attrs::Value>;

struct TensorMessage {       // serial_v2.Tensor
    std::string name;        // 1
    std::vector<std::uint64_t> dims;  // 2 (uint32, packed or not)
    std::int32_t data_type = 0;       // 5: xir::DataType::Type
    std::int32_t bit_width = 0;       // 6
    AttrMap attrs;                    // 10
};

struct OpMessage {  // serial_v2.OPNode
    std::string name;                 // 1
    std::string type;                 // 2
    AttrMap attrs;                    // 3
    std::vector<std::string> inputs;  // 4: OpArg{1 arg_name, 2 arg_ops}, the ops read by every argument
    bool has_output = false;
    TensorMessage output;  // 5
};

struct SubgraphMessage {  // serial_v2.SubGraph
    std::string name;                   // 1
    std::vector<std::string> ops;       // 3: a leaf's ops
    AttrMap attrs;                      // 5
    std::vector<SubgraphMessage> children;  // 10
};

struct GraphMessage {  // serial_v2.Graph
    std::string name;             // 1
    std::vector<OpMessage> ops;   // 5
    bool has_root = false;
    SubgraphMessage root;  // 10
    AttrMap attrs;         // 11
};

// Parses `w` (the whole file) as a Graph, merging repeated singular fields as protobuf does (the last scalar wins,
// messages merge, map entries replace by key). Throws std::runtime_error on a malformed message.
void parse_graph(Wire w, GraphMessage& g);

}  // namespace standin_xir
