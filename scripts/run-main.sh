#!/usr/bin/env bash
# The main job: install and build on first use (scripts/setup.sh, its output on
# stderr), then run autopar. With no arguments it runs MAIN_JOB below on built-in
# defaults; with arguments it runs `autopar ARGS...` instead.
set -euo pipefail

# The default job. Until the planner lands (#4) it prints the graph summary of
# Llama3-8B; then this line becomes e.g. (plan --model llama3-8b).
MAIN_JOB=(graph --model llama3-8b)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${AUTOPAR_BUILD_DIR:-build}"
cd "$repo_root"
scripts/setup.sh autopar >&2
(($# > 0)) || set -- "${MAIN_JOB[@]}"
echo "run-main: running: $build_dir/tools/autopar/autopar $*" >&2
exec "$build_dir/tools/autopar/autopar" "$@"
