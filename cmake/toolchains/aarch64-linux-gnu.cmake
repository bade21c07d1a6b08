# Cross-compiling accel for 64-bit Arm Linux boards (RDK X3/X5/S100, Kria/ZCU) on an x86-64 build host:
#
#   cmake -S . -B build/aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#
# By default it uses Debian's/Ubuntu's cross compilers (apt-get install gcc-aarch64-linux-gnu
# g++-aarch64-linux-gnu) and their target libraries in /usr/aarch64-linux-gnu. Cache variables (-D):
#   ACCEL_CROSS_PREFIX   how the compilers' names start: "aarch64-linux-gnu-" (default), or a path such as
#                        /opt/toolchain/bin/aarch64-linux-gnu- for a board SDK's compilers.
#                        -DCMAKE_C_COMPILER=... -DCMAKE_CXX_COMPILER=... name them outright instead.
#   ACCEL_CROSS_SYSROOT  a board SDK's sysroot (a copy of the board's root file system: usr/include,
#                        usr/lib): becomes CMAKE_SYSROOT, so the compilers get --sysroot and libraries and
#                        headers are looked for there. Empty (default): Debian's /usr/aarch64-linux-gnu,
#                        which Debian's compilers search by themselves; it must not be passed as --sysroot
#                        (its libc.so names absolute paths, so the link would fail).
#   CMAKE_CROSSCOMPILING_EMULATOR  how the build host runs a target program (ctest prefixes each test
#                        with it). Default: "qemu-aarch64 -L <target root>" when qemu-aarch64 (package
#                        qemu-user) is found, so that `ctest` runs the aarch64 tests under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(ACCEL_CROSS_PREFIX "aarch64-linux-gnu-" CACHE STRING "Prefix of the cross compilers' names (may include a directory)")
set(ACCEL_CROSS_SYSROOT "" CACHE PATH "A board SDK's sysroot (empty: Debian's /usr/aarch64-linux-gnu, without --sysroot)")
# try_compile projects read this file again without the cache: hand them the two settings.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ACCEL_CROSS_PREFIX ACCEL_CROSS_SYSROOT)

if(NOT CMAKE_C_COMPILER)
  set(CMAKE_C_COMPILER "${ACCEL_CROSS_PREFIX}gcc")
endif()
if(NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER "${ACCEL_CROSS_PREFIX}g++")
endif()

if(ACCEL_CROSS_SYSROOT)
  set(CMAKE_SYSROOT "${ACCEL_CROSS_SYSROOT}")
  set(_accel_target_root "${ACCEL_CROSS_SYSROOT}")
else()
  set(_accel_target_root "/usr/aarch64-linux-gnu")
endif()
list(APPEND CMAKE_FIND_ROOT_PATH "${_accel_target_root}")
# Programs run on the build host (Python, the compilers); libraries, headers and packages are the
# target's, so that no x86-64 library is ever linked into an aarch64 build.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

if(NOT DEFINED CMAKE_CROSSCOMPILING_EMULATOR)
  find_program(ACCEL_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
  if(ACCEL_QEMU_AARCH64)
    # -L: the target's dynamic loader and libraries (libc, libstdc++) come from the target root.
    set(CMAKE_CROSSCOMPILING_EMULATOR "${ACCEL_QEMU_AARCH64};-L;${_accel_target_root}")
  endif()
endif()
