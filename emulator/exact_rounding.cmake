# Exact int8 rounding, declared in the source: a file whose float arithmetic must round where onnxruntime's
# and the devices' reference rules do includes "math/exact_rounding.h", and is built with -ffp-contract=off
# (no multiply-add contracted into an FMA the rule does not have). The declaration moves with the file, so
# a rename cannot drop it; a source under src/math or src/ops that includes an int8 arithmetic header
# without it stops the configure (and the test exact_rounding_declared), and the header stops a build
# without the flag.
#
# Usable in a project (accel_exact_rounding_sources) and as a script:
#   cmake -DACCEL_EMU_SRC=<emulator/src> -P exact_rounding.cmake

# The headers of the int8 arithmetic: a source that includes one computes int8 rounding or its constants.
set(ACCEL_EMU_INT8_HEADERS
  math/fixpoint.h math/qbinary.h math/qbinary_row.h math/qgemm_impl.h math/qgemm_avx512.h math/qim2col.h
  math/qpool.h math/qsoftmax.h math/qtable.h math/quantize.h ops/quant_util.h)

# Sets out_var to the sources of the list that declare exact rounding; a source under src/math or src/ops
# that includes an int8 header and does not declare it is a FATAL_ERROR naming it.
function(accel_exact_rounding_sources out_var)
  set(exact "")
  set(missing "")
  foreach(src IN LISTS ARGN)
    file(STRINGS "${src}" includes REGEX "^#include \"[a-z_/0-9]+\\.h\"")
    if("#include \"math/exact_rounding.h\"" IN_LIST includes)
      list(APPEND exact "${src}")
    elseif(src MATCHES "/src/(math|ops)/[^/]+$")
      foreach(header IN LISTS ACCEL_EMU_INT8_HEADERS)
        if("#include \"${header}\"" IN_LIST includes)
          list(APPEND missing "${src} (includes ${header})")
          break()
        endif()
      endforeach()
    endif()
  endforeach()
  if(missing)
    list(JOIN missing "\n  " missing)
    message(FATAL_ERROR "accel emulator: these sources compute int8 arithmetic but do not include "
                        "\"math/exact_rounding.h\", which builds them with exact rounding:\n  ${missing}")
  endif()
  set(${out_var} "${exact}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND ACCEL_EMU_SRC)
  file(GLOB_RECURSE sources "${ACCEL_EMU_SRC}/*.cc")
  accel_exact_rounding_sources(exact ${sources})
  list(LENGTH exact count)
  message(STATUS "${count} sources declare exact rounding")
endif()
