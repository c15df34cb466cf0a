#!/usr/bin/env bash
# The whole test suite: install and build on first use (scripts/setup.sh), then
# run every test with CTest. Extra arguments go to ctest (e.g. -R cli).
# This is the command the README's Quick start and CI (.ci/run) both run.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${AUTOPAR_BUILD_DIR:-build}"
cd "$repo_root"
scripts/setup.sh
echo "test: running: ctest --test-dir $build_dir --output-on-failure -j2 $*" >&2
ctest --test-dir "$build_dir" --output-on-failure -j2 "$@"
