# glog and gflags for a real Vitis AI SDK: XIR's xir/attrs/attrs.hpp (included by tensor.hpp, op.hpp,
# subgraph.hpp, graph.hpp) includes UniLog/UniLog.hpp, which includes <glog/logging.h>; glog's header includes
# <gflags/gflags.h> when glog was built with gflags (Debian's, Vitis AI's images'). Unlike the SDK prefix they
# are looked for the ordinary way (in a cross build: in the target's root). Sets ACCEL_VART_GLOG to link.
find_package(glog CONFIG QUIET)
if(TARGET glog::glog)
  set(ACCEL_VART_GLOG glog::glog)
else()
  find_path(ACCEL_GLOG_INCLUDE glog/logging.h)
  find_library(ACCEL_GLOG_LIB glog)
  if(NOT ACCEL_GLOG_INCLUDE OR NOT ACCEL_GLOG_LIB)
    message(FATAL_ERROR "ACCEL_VART_SDK=${ACCEL_VART_SDK}: Vitis AI's headers include <glog/logging.h> (xir/attrs/attrs.hpp "
      "through UniLog/UniLog.hpp) and no glog was found: install glog and gflags (Debian/Ubuntu: apt-get install "
      "libgoogle-glog-dev libgflags-dev) or add their prefix to CMAKE_PREFIX_PATH")
  endif()
  add_library(accel_vart_glog INTERFACE)
  target_include_directories(accel_vart_glog SYSTEM INTERFACE "${ACCEL_GLOG_INCLUDE}")
  target_link_libraries(accel_vart_glog INTERFACE "${ACCEL_GLOG_LIB}")
  set(ACCEL_VART_GLOG accel_vart_glog)
endif()

# glog's CMake package brings gflags along when it was built with them; the fallback must look itself.
find_path(ACCEL_GFLAGS_INCLUDE gflags/gflags.h)
if(NOT ACCEL_GFLAGS_INCLUDE)
  message(FATAL_ERROR "ACCEL_VART_SDK=${ACCEL_VART_SDK}: <glog/logging.h> includes <gflags/gflags.h> and no gflags "
    "was found: install gflags (Debian/Ubuntu: apt-get install libgflags-dev) or add its prefix to CMAKE_PREFIX_PATH")
endif()
find_package(gflags CONFIG QUIET)
if(TARGET gflags::gflags)
  list(APPEND ACCEL_VART_GLOG gflags::gflags)
elseif(TARGET gflags)
  list(APPEND ACCEL_VART_GLOG gflags)
else()
  find_library(ACCEL_GFLAGS_LIB gflags)
  if(NOT ACCEL_GFLAGS_LIB)
    message(FATAL_ERROR "ACCEL_VART_SDK=${ACCEL_VART_SDK}: gflags' header is in ${ACCEL_GFLAGS_INCLUDE} but its library "
      "libgflags was not found: install gflags (Debian/Ubuntu: apt-get install libgflags-dev)")
  endif()
  add_library(accel_vart_gflags INTERFACE)
  target_include_directories(accel_vart_gflags SYSTEM INTERFACE "${ACCEL_GFLAGS_INCLUDE}")
  target_link_libraries(accel_vart_gflags INTERFACE "${ACCEL_GFLAGS_LIB}")
  list(APPEND ACCEL_VART_GLOG accel_vart_gflags)
endif()
