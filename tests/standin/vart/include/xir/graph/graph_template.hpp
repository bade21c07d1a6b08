// graph_template.hpp - XIR's op-pattern templates (stand-in): declared only, as the stand-in has no ops to
// match (Graph::isomorphism and Subgraph::isomorphism end the process). Included where XIR's is.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "xir/XirExport.hpp"
#include "xir/op/op.hpp"

namespace xir {

class OpTemplate;
class GraphTemplate;

}  // namespace xir
