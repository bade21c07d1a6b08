#!/usr/bin/env bash
# The aarch64 cross build (docs/cross-compiling.md): libaccel, the emulator driver (portable GEMM), the
# vendor drivers on their stand-in SDKs and the C tests, cross-compiled with Debian's aarch64 compilers
# and cmake/toolchains/aarch64-linux-gnu.cmake, then the C tests under qemu-user (the toolchain file makes
# qemu-aarch64 the crosscompiling emulator: ctest runs every test binary through it). The tests' models
# are made by the build host's Python (onnx, onnxruntime, accel.compiler from the source tree), as natively.
set -euo pipefail
cd "$(dirname "$0")/.."
start=${SECONDS}

packages=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user file)
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null ||
   ! command -v file >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine may have no package lists: update only when the install needs it.
  apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  }
fi
python3 -c "import numpy, onnx, onnxruntime" 2>/dev/null || python3 -m pip install --quiet numpy onnx onnxruntime

build=build/aarch64
cmake -S . -B "${build}" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DACCEL_BUILD_TESTS=ON -DPython3_EXECUTABLE="$(command -v python3)"
cmake --build "${build}"
echo "== built in $((SECONDS - start)) s (since the start of this script)"

# The tests must really be aarch64 programs, run through qemu-user.
echo "== what ctest runs"
file -L "${build}/tests/test_ops" "${build}/lib/libaccel.so" "${build}/lib/accel-drivers/libaccel_driver_emu.so"
file -L "${build}/tests/test_ops" | grep -q "ARM aarch64" || { echo "test_ops is not an aarch64 program" >&2; exit 1; }
ctest --test-dir "${build}" -N -V -R '^ops$' | grep "Test command:"

echo "== ctest under qemu-user (every test)"
ctest_start=${SECONDS}
rc=0
ctest --test-dir "${build}" --output-on-failure -j "$(nproc)" || rc=$?
echo "== ctest took $((SECONDS - ctest_start)) s; the whole script $((SECONDS - start)) s"
exit "${rc}"
