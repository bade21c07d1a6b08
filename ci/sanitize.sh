#!/usr/bin/env bash
# The C tests again under the sanitizers, with everything (libaccel, the emulator driver, the tests)
# instrumented: ASan+UBSan with the portable GEMM instead of the BLAS (so that both GEMM paths run in
# CI), then TSan over the scheduler, callbacks and concurrent runs.
set -euo pipefail
cd "$(dirname "$0")/.."
start=${SECONDS}
lap() { echo "== $1: $((SECONDS - start)) s into ci/sanitize.sh"; }
cmake -S . -B build/asan -G Ninja -DACCEL_BUILD_TESTS=ON -DACCEL_USE_BLAS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCEL_SANITIZE=address,undefined
cmake --build build/asan
lap "ASan build"
ctest --test-dir build/asan --output-on-failure
lap "ASan tests"

cmake -S . -B build/tsan -G Ninja -DACCEL_BUILD_TESTS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCEL_SANITIZE=thread
cmake --build build/tsan
lap "TSan build"
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir build/tsan --output-on-failure
