#!/usr/bin/env bash
# The main job: install and build on first use (scripts/setup.sh, its output on
# stderr), then run autopar. With no arguments it runs MAIN_JOB below on built-in
# defaults; with arguments it runs `autopar ARGS...` instead.
set -euo pipefail

# The default job: plan Llama3-8B on an 8x8 H100 mesh and print the plan.
MAIN_JOB=(plan --model llama3-8b --mesh 8x8 --hardware h100)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${AUTOPAR_BUILD_DIR:-build}"
cd "$repo_root"
scripts/setup.sh autopar >&2
(($# > 0)) || set -- "${MAIN_JOB[@]}"
echo "run-main: running: $build_dir/tools/autopar/autopar $*" >&2
exec "$build_dir/tools/autopar/autopar" "$@"
