#!/usr/bin/env bash
# Bounded fuzzing (about a minute): the .accm reader through the public ABI (libFuzzer, clang, with
# ASan+UBSan), then the compiler's ONNX input and the emulator with the compiler's output, and the .xmodel reader
# and DPU front end (atheris).
# Seeds are the models the C tests compile (tests/tools/make_cases.py). A fault fails the run and
# leaves its input in build/fuzz/findings/: add it to tests/fuzz/regressions/{accm,onnx,xmodel}/ with the fix.
#   FUZZ_SECONDS=30 FUZZ_SEED=1 bash ci/fuzz.sh      (seconds per fuzzer; the seed of its mutations)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
seed="${FUZZ_SEED:-1}"  # fixed in CI, so that a run explores the same inputs on every machine
out=build/fuzz
if ! command -v clang >/dev/null || ! command -v clang++ >/dev/null; then
  echo "ci/fuzz.sh: installing clang (libFuzzer)"
  apt-get update -q >/dev/null && apt-get install -y -q clang >/dev/null
fi
python -c "import atheris" 2>/dev/null || python -m pip install -q atheris

cmake -S . -B "$out" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DACCEL_BUILD_FUZZERS=ON -DACCEL_USE_BLAS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DACCEL_SANITIZE=address,undefined >/dev/null
cmake --build "$out" --target fuzz_accm accel_driver_emu

seeds="$out/seeds"
rm -rf "$seeds" "$out/findings"
mkdir -p "$seeds/accm" "$seeds/onnx" "$seeds/xmodel" "$out/corpus/accm" "$out/corpus/onnx" "$out/corpus/xmodel" \
  "$out/findings"
python tests/tools/make_cases.py "$out/cases" >/dev/null
cp "$out"/cases/*.accm "$seeds/accm/"
cp "$out"/cases/*.onnx "$seeds/onnx/"
cp tests/fuzz/regressions/accm/*.accm "$seeds/accm/" 2>/dev/null || true
cp tests/fuzz/regressions/onnx/*.onnx "$seeds/onnx/" 2>/dev/null || true
python tests/fuzz/xmodel_seeds.py "$seeds/xmodel" >/dev/null
cp tests/fuzz/regressions/xmodel/*.xmodel "$seeds/xmodel/" 2>/dev/null || true

echo "ci/fuzz.sh: .accm reader, ${seconds} s"
# Leaks are the sanitizer build's job (ci/sanitize.sh runs the replay of these checks with leak detection).
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
ACCEL_DRIVER_PATH= "$out/tests/fuzz_accm" -max_total_time="$seconds" -seed="$seed" -timeout=20 -rss_limit_mb=8192 \
  -print_final_stats=1 -artifact_prefix="$out/findings/" "$out/corpus/accm" "$seeds/accm"

echo "ci/fuzz.sh: compiler ONNX input, ${seconds} s"
python tests/fuzz/fuzz_compiler.py -max_total_time="$seconds" -seed="$seed" -timeout=20 -rss_limit_mb=8192 \
  -print_final_stats=1 -artifact_prefix="$out/findings/" "$out/corpus/onnx" "$seeds/onnx"
echo "ci/fuzz.sh: .xmodel reader and DPU front end, ${seconds} s"
python tests/fuzz/fuzz_xmodel.py -max_total_time="$seconds" -seed="$seed" -timeout=20 -rss_limit_mb=8192 \
  -print_final_stats=1 -artifact_prefix="$out/findings/" "$out/corpus/xmodel" "$seeds/xmodel"
echo "ci/fuzz.sh: no finding"
