# GEMM-shaped work goes through a CBLAS when one is found: scipy-openblas32 (the pip build; its
# symbols carry a "scipy_" prefix) or a system CBLAS (conan, plain CMake). Otherwise the emulator's
# portable GEMM is used, so the library always builds.
# A conan package must not depend on a Python environment: its recipe turns the scipy probe off.
option(ACCEL_BLAS_FROM_PYTHON "Look for scipy-openblas32 in the Python found first" ON)
set(ACCEL_BLAS "portable")
# Cross-compiling, the Python found is the build host's: its scipy-openblas32 is for the wrong machine.
# A CBLAS for the target can still come from the target root (the system CBLAS search below).
if(CMAKE_CROSSCOMPILING AND ACCEL_BLAS_FROM_PYTHON)
  message(STATUS "accel emulator GEMM: cross-compiling, the host Python's scipy-openblas32 is not used")
  set(ACCEL_BLAS_FROM_PYTHON OFF)
endif()
if(ACCEL_USE_BLAS)
  if(ACCEL_BLAS_FROM_PYTHON)
    find_package(Python3 COMPONENTS Interpreter QUIET)
  endif()
  if(ACCEL_BLAS_FROM_PYTHON AND Python3_FOUND)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" -c "import scipy_openblas32 as s; print(s.get_include_dir() + ';' + s.get_lib_dir())"
      OUTPUT_VARIABLE _scipy_blas OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _scipy_rc)
  endif()
  if(Python3_FOUND AND _scipy_rc EQUAL 0 AND _scipy_blas)
    list(GET _scipy_blas 0 _blas_inc)
    list(GET _scipy_blas 1 _blas_lib)
    find_library(ACCEL_SCIPY_OPENBLAS NAMES scipy_openblas PATHS "${_blas_lib}" NO_DEFAULT_PATH)
    if(ACCEL_SCIPY_OPENBLAS)
      set(ACCEL_BLAS "scipy-openblas32")
      target_include_directories(accel_driver_emu PRIVATE "${_blas_inc}")
      target_compile_definitions(accel_driver_emu PRIVATE ACCEL_HAVE_CBLAS=1 ACCEL_CBLAS_SCIPY_PREFIX=1)
      target_link_libraries(accel_driver_emu PRIVATE "${ACCEL_SCIPY_OPENBLAS}")
      if(SKBUILD)
        # accel/lib/accel-drivers/ -> site-packages/scipy_openblas32/lib
        set_target_properties(accel_driver_emu PROPERTIES
          INSTALL_RPATH "$ORIGIN/../../../scipy_openblas32/lib")
      else()
        set_target_properties(accel_driver_emu PROPERTIES INSTALL_RPATH "${_blas_lib}")
      endif()
    endif()
  endif()
  if(ACCEL_BLAS STREQUAL "portable")
    find_path(ACCEL_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas)
    find_library(ACCEL_CBLAS_LIB NAMES openblas cblas blas)
    if(ACCEL_CBLAS_INCLUDE AND ACCEL_CBLAS_LIB)
      set(ACCEL_BLAS "${ACCEL_CBLAS_LIB}")
      target_include_directories(accel_driver_emu PRIVATE "${ACCEL_CBLAS_INCLUDE}")
      target_compile_definitions(accel_driver_emu PRIVATE ACCEL_HAVE_CBLAS=1)
      target_link_libraries(accel_driver_emu PRIVATE "${ACCEL_CBLAS_LIB}")
    endif()
  endif()
endif()
message(STATUS "accel emulator GEMM: ${ACCEL_BLAS}")
target_compile_definitions(accel_driver_emu PRIVATE ACCEL_BLAS_NAME="${ACCEL_BLAS}")
