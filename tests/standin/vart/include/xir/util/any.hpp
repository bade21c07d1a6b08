// any.hpp - xir::any, the type of attribute values (stand-in): std::any, so XIR needs C++17 as Vitis AI 3.5
// does.
#pragma once

#if __cplusplus < 201703L
#error "XIR needs C++17 (std::any)"
#endif
#include <any>

namespace xir {
using any = std::any;
namespace stdx = ::std;  // any_cast
}  // namespace xir
