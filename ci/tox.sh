#!/usr/bin/env bash
# The maintainers' checks (tox.ini): the Python suite on each front-end against the built wheel, the
# linters and the -Werror build, and the benchmarks' smoke runs. Installs tox with pip if it is missing;
# arguments go to tox (default: the whole envlist).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m tox --version >/dev/null 2>&1; then
  python3 -m pip install --quiet tox
fi
start=${SECONDS}
status=0
python3 -m tox "$@" || status=$?
echo "tox: $((SECONDS - start)) s (exit ${status})"
exit "${status}"
