#!/usr/bin/env bash
# The C tests again, with everything (libaccel, the emulator driver, the tests) built with ASan and
# UBSan, and with the portable GEMM instead of the BLAS so that both GEMM paths run in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/asan -G Ninja -DACCEL_BUILD_TESTS=ON -DACCEL_USE_BLAS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCEL_SANITIZE=address,undefined
cmake --build build/asan
ctest --test-dir build/asan --output-on-failure
