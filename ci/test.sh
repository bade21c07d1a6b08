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
# The vendor drivers, built above against the stand-in SDKs (tests/standin), under the same suite: the
# stand-ins run on the emulator driver installed with the package, the drivers come from the build tree.
drivers="$(python3 -c 'import accel, os; print(os.path.join(os.path.dirname(accel.__file__), "lib", "accel-drivers"))')"
for device in ${ACCEL_VENDOR_TEST_DEVICES:-bpu:0 vart:0}; do
  for frontend in pybind cffi; do
    echo "== Python tests on ${device} (stand-in SDK), ${frontend} front-end"
    ACCEL_TEST_DEVICE="${device}" ACCEL_FRONTEND="${frontend}" \
      ACCEL_DRIVER_PATH="${drivers}:${PWD}/build/ctest/standin/drivers" python3 -m pytest -q tests/python
  done
done
echo "== The front-end benchmark runs (a smoke run: speed is measured by a full run, not here)"
python3 benchmarks/bench_frontends.py --quick
