// op.hpp - xir::Op (stand-in). The stand-in's graphs hold tensors, subgraphs and attributes but no ops, so Op
// is declared and never defined: code that calls an op's members compiles against Vitis AI's headers and
// not against these, never the other way round. Included where XIR's op.hpp is, with what XIR's brings in
// (attributes and tensors).
#pragma once

#include <memory>
#include <vector>

#include "xir/XirExport.hpp"
#include "xir/attrs/attrs.hpp"
#include "xir/tensor/tensor.hpp"

namespace xir {

class OpDef;
class Graph;
class Op;

}  // namespace xir
