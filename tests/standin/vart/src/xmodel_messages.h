// xmodel_messages.h - the messages of XIR's serialized graph (package serial_v2; field numbers from XIR's published
// graph_proto_v2.proto) as the stand-in's libxir parses them from the wire, before they become xir::Graph: what
// xmodel_messages.cc fills and xmodel_reader.cc checks and builds from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "protobuf_wire.h"

namespace standin_xir {

using namespace standin::protobuf;  // the wire reader, shared with the libdnn stand-in's .bin reader

// An attribute's value as the file holds it: the C++ types XIR's API reads its AttrValue kinds as (scalars,
// std::string, bytes as std::vector<char>, their vectors and string-keyed maps). The graph stores the one held
// in an xir::any, which get_attr<T> reads with exactly that T.
using Bytes = std::vector<char>;
template <typename T>
using Map = std::map<std::string, T>;
using AttrValue =
    std::variant<bool, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double, std::string, Bytes,
                 std::vector<bool>, std::vector<std::int32_t>, std::vector<std::uint32_t>, std::vector<std::int64_t>,
                 std::vector<std::uint64_t>, std::vector<float>, std::vector<double>, std::vector<std::string>,
                 std::vector<Bytes>, Map<std::int32_t>, Map<std::uint32_t>, Map<std::int64_t>, Map<std::uint64_t>,
                 Map<std::string>, Map<Bytes>, Map<std::vector<std::int32_t>>, Map<std::vector<std::uint32_t>>,
                 Map<std::vector<std::int64_t>>, Map<std::vector<std::uint64_t>>, Map<std::vector<std::string>>>;
using AttrMap = std::map<std::string, AttrValue>;

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
