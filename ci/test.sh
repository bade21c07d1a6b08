#!/usr/bin/env bash
# The README's test command: installs accel with what its tests need, then runs every test: the C
# tests (ctest, through the public ABI) and the Python tests (pytest, against the installed package),
# the whole Python suite once per front-end (pybind11, then cffi: ACCEL_FRONTEND selects at import).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet ".[test]"
cmake -S . -B build/ctest -G Ninja -DACCEL_BUILD_TESTS=ON
cmake --build build/ctest
ctest --test-dir build/ctest --output-on-failure
for frontend in pybind cffi; do
  echo "== Python tests on the ${frontend} front-end"
  ACCEL_FRONTEND="${frontend}" python3 -m pytest tests/python
done
echo "== The front-end benchmark runs (a smoke run: speed is measured by a full run, not here)"
python3 benchmarks/bench_frontends.py --quick
