// runtime.h - the hbUCP stand-in's one engine (../../common/engine.h), shared by its hbDNN front end
// (dnn.cc) and its hbUCP task API (ucp.cc).
#pragma once

#include "engine.h"

namespace standin {
namespace ucp {

// Tasks created and not yet finished (or released), at most: hbUCP's task pool (HB_UCP_MAX_TASK_NUM
// is said to default to 32).
constexpr int kTaskLimit = 32;

Engine& engine();

}  // namespace ucp
}  // namespace standin
