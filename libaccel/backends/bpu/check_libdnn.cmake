# check_libdnn.cmake - refuses, at configure time, an X3/X5 libdnn older than the bpu driver needs.
#
# The driver (runtime_dnn.cc, dnn_tensor.cc) needs what libdnn 1.2x declares: hbDNNSetTaskDoneCb (a
# task's end is reported, never polled), hbDNNGetErrorDesc in dnn/hb_dnn_status.h (messages), and in the
# tensor properties stride[], quantizeAxis and the scales' zero points. The libdnn 1.6.1 of older RDK X3
# images (its header: HorizonRDK/hobot_dnn dnn_node/dnn_node_deps) has none of them; compiled against
# it the driver would fail with a page of errors, or, worse, with a header that has some of them, read
# a layout it does not have. So each is checked by compiling against the SDK's own headers (no linking:
# this works for a cross build too), and the configure stops with one message naming the version found,
# everything missing and what to install.
include_guard(GLOBAL)
include(CheckCXXSourceCompiles)

# accel_bpu_check_libdnn(<include dir holding dnn/hb_dnn.h>): FATAL_ERROR unless it has all the driver needs.
function(accel_bpu_check_libdnn include_dir)
  set(header "${include_dir}/dnn/hb_dnn.h")
  set(version "of unknown version (no HB_DNN_VERSION_* macros)")
  file(STRINGS "${header}" defines REGEX "^#define[ \t]+HB_DNN_VERSION_(MAJOR|MINOR|PATCH)[ \t]")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "HB_DNN_VERSION_${part}[ \t]+\\(?([0-9]+)" _ "${defines}")
    set(v_${part} "${CMAKE_MATCH_1}")
  endforeach()
  if(NOT v_MAJOR STREQUAL "" AND NOT v_MINOR STREQUAL "" AND NOT v_PATCH STREQUAL "")
    set(version "${v_MAJOR}.${v_MINOR}.${v_PATCH}")
  endif()

  # What the driver uses, each as a snippet that compiles only if the SDK declares it.
  set(prelude "#include <dnn/hb_dnn.h>\n#if __has_include(<dnn/hb_dnn_status.h>)\n#include <dnn/hb_dnn_status.h>\n#endif\n")
  set(need_task_done_cb "hbDNNSetTaskDoneCb() (task-done callbacks)")
  set(code_task_done_cb "int main() { auto f = &hbDNNSetTaskDoneCb; return f != nullptr; }")
  set(need_error_desc "hbDNNGetErrorDesc() in dnn/hb_dnn_status.h (error descriptions)")
  set(code_error_desc "#include <dnn/hb_dnn_status.h>\nint main() { auto f = &hbDNNGetErrorDesc; return f != nullptr; }")
  set(need_stride "hbDNNTensorProperties.stride[] (byte strides of padded tensors)")
  set(code_stride "int main() { hbDNNTensorProperties p; return (int)sizeof p.stride[0]; }")
  set(need_axis "hbDNNTensorProperties.quantizeAxis (per-axis scales)")
  set(code_axis "int main() { hbDNNTensorProperties p; return (int)sizeof p.quantizeAxis; }")
  set(need_zero_point "hbDNNQuantiScale.zeroPointLen/zeroPointData (zero points)")
  set(code_zero_point "int main() { hbDNNQuantiScale s; return (int)(sizeof s.zeroPointLen + sizeof s.zeroPointData); }")

  set(CMAKE_REQUIRED_INCLUDES "${include_dir}")
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)  # compile only: the SDK's libraries may be for another CPU
  set(missing "")
  foreach(what task_done_cb error_desc stride axis zero_point)
    unset(ACCEL_BPU_LIBDNN_HAS_${what} CACHE)  # an SDK given anew is checked anew
    check_cxx_source_compiles("${prelude}${code_${what}}" ACCEL_BPU_LIBDNN_HAS_${what})
    if(NOT ACCEL_BPU_LIBDNN_HAS_${what})
      string(APPEND missing "\n    ${need_${what}}")
    endif()
    unset(ACCEL_BPU_LIBDNN_HAS_${what} CACHE)
  endforeach()
  if(missing)
    message(FATAL_ERROR
      "bpu driver: the libdnn in ${include_dir} (dnn/hb_dnn.h) is ${version}, older than the driver needs. "
      "It lacks:${missing}\n"
      "The driver needs the libdnn 1.2x API (checked against 1.24.5, RDK X5). The libdnn 1.6.1 of older RDK X3 "
      "images has none of the above. On an RDK X3, install libdnn 1.22.6 or later (the hobot-dnn package of an "
      "RDK OS 3.x image: the RDK documentation of that release describes this API; the version is from our "
      "notes, not verified on an X3 board) and give its prefix as ACCEL_BPU_SDK; on an RDK X5, its image's "
      "libdnn (1.24.x) has all of it.")
  endif()
  message(STATUS "bpu driver: libdnn ${version} in ${include_dir} has all the driver needs")
endfunction()
