// tool_function.hpp - XIR's helper functions (stand-in): only the tensor order subgraphs sort by.
#pragma once

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <type_traits>

#include "xir/op/op.hpp"

namespace xir {

// By name: the order of Subgraph::get_sorted_*_tensors by default, and of VART's runners' tensors.
XIR_DLLESPEC bool TensorLexicographicalOrder(Tensor* a, Tensor* b);

}  // namespace xir
