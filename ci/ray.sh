#!/usr/bin/env bash
# CI's Ray step (after ci/test.sh, whose wheel it installs): tox -e ray, accel.ray on a local Ray cluster of 2 CPUs
# (tests/ray) and the Ray throughput benchmark, kept out of the main suite because Ray takes a minute to install and
# its cluster seconds to start.
set -euo pipefail
cd "$(dirname "$0")/.."
wheel="$(ls build/wheel/accel-*.whl)"
bash ci/tox.sh -e ray --installpkg "${wheel}"
