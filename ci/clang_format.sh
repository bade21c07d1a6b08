#!/usr/bin/env bash
# Checks that the tracked C/C++ sources are formatted as .clang-format says (tox -e lint runs it with the
# pinned clang-format from PyPI). Prints what differs and fails if anything does; `--fix` rewrites them.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(--dry-run --Werror)
if [[ "${1:-}" == "--fix" ]]; then mode=(-i); fi
mapfile -d '' files < <(git ls-files -z -- '*.c' '*.h' '*.cc' '*.cpp' '*.inc' ':!:build/*' ':!:build-*/*')
clang-format "${mode[@]}" "${files[@]}"
echo "clang-format: ${#files[@]} files checked"
