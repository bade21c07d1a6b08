#!/usr/bin/env bash
# The conan package (conanfile.py) built and tested from this tree, with no remote and no external
# requires: installs conan with pip if missing (set CONAN to use another), detects a default profile,
# then `conan create . -nr`, which builds the package and runs test_package/ (the shipped model on emu).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${CONAN:-}" ]; then
  conan=("$CONAN")
elif command -v conan >/dev/null; then
  conan=(conan)
else
  echo "ci/conan.sh: installing conan"
  python3 -m pip install --quiet "conan>=2"
  conan=(python3 -m conans.conan)  # pip's script folder may not be on PATH
fi
"${conan[@]}" profile detect --force
time "${conan[@]}" create . -nr
