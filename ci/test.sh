#!/usr/bin/env bash
# The README's test command: installs accel with what its tests need, then runs every test: the C
# tests (ctest, through the public ABI), then tox (tox.ini: the whole Python suite once per front-end,
# pybind11 then cffi, against one built wheel; the linters and the warnings-as-errors build; the
# benchmarks' smoke runs), then the Python suite again on the vendor devices through their drivers and
# the stand-in SDKs.
set -euo pipefail
cd "$(dirname "$0")/.."
start=${SECONDS}
lap() { echo "== $1: $((SECONDS - start)) s into ci/test.sh"; }
# One wheel, built once: installed here (for the vendor-device runs below) and into every tox env.
rm -rf build/wheel
python3 -m pip wheel --quiet --no-deps -w build/wheel .
wheel="$(ls build/wheel/accel-*.whl)"
# accel itself replaced even when the same version is installed, then what it and its tests need.
python3 -m pip install --quiet --force-reinstall --no-deps "${wheel}"
python3 -m pip install --quiet "${wheel}[test]"
lap "wheel built and installed"
# With the benchmarks and warnings as errors: tox's lint env (ACCEL_WERROR_BUILD) then finds this tree built.
cmake -S . -B build/ctest -G Ninja -DACCEL_BUILD_TESTS=ON -DACCEL_BUILD_BENCHMARKS=ON -DACCEL_WERROR=ON
cmake --build build/ctest
lap "C tests built"
ctest --test-dir build/ctest --output-on-failure
lap "C tests run"
ACCEL_WERROR_BUILD="${PWD}/build/ctest" bash ci/tox.sh --installpkg "${wheel}"
lap "tox done"
# The vendor drivers, built above against the stand-in SDKs (tests/standin), under the same suite: the
# stand-ins run on the emulator driver installed with the package, the drivers come from the build tree.
# Each run: device URI, the folder of its driver, its model format (X3/X5 .bin, S100 .hbm, .xmodel).
drivers="$(python3 -c 'import accel, os; print(os.path.join(os.path.dirname(accel.__file__), "lib", "accel-drivers"))')"
for run in bpu:0,drivers,.bin bpu:0,drivers-ucp,.hbm vart:0,drivers,.xmodel; do
  IFS=, read -r device folder format <<<"${run}"
  for frontend in pybind cffi; do
    echo "== Python tests on ${device} (${format} models, stand-in SDK), ${frontend} front-end"
    ACCEL_TEST_DEVICE="${device}" ACCEL_TEST_MODEL_FORMAT="${format}" ACCEL_FRONTEND="${frontend}" \
      ACCEL_DRIVER_PATH="${drivers}:${PWD}/build/ctest/standin/${folder}" python3 -m pytest -q tests/python
  done
done
lap "vendor-device suites done"
