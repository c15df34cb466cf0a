#!/usr/bin/env bash
# The whole test suite: install and build on first use (scripts/setup.sh), then
# run every test with CTest. This is the command the README's Quick start and
# CI (.ci/run) both run.
#
#   scripts/test.sh [--sanitize] [CTEST ARGS...]     e.g. scripts/test.sh -R cli
#
#   --sanitize   build in build-sanitize/ with AddressSanitizer and
#                UndefinedBehaviorSanitizer (AUTOPAR_SANITIZE=address,undefined
#                does the same) and run the whole suite, MPI tests included.
#                Suppressions, each with its reason: scripts/sanitizers/.
#
# Environment:
#   CI=true            a test whose dependency is missing fails instead of
#                      skipping (tests/support/require.*), and the fuzz targets
#                      run 30 s each after the tests (scripts/fuzz.sh)
#   AUTOPAR_BUILD_DIR  build directory (default: build, or build-sanitize)
#
# Without CI=true, skipped tests are allowed and listed, with their reasons, at
# the end of the run.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
if [[ "${1:-}" == "--sanitize" ]]; then
  shift
  export AUTOPAR_SANITIZE="${AUTOPAR_SANITIZE:-address,undefined}"
fi
if [[ -n "${AUTOPAR_SANITIZE:-}" ]]; then
  export AUTOPAR_BUILD_DIR="${AUTOPAR_BUILD_DIR:-build-sanitize}"
  # shellcheck source=sanitizers/environment.sh
  . scripts/sanitizers/environment.sh
fi
build_dir="${AUTOPAR_BUILD_DIR:-build}"

# The tests that did not run, with the reason each printed (a GoogleTest skip
# message or a shell test's "SKIP: ..." line), from CTest's log.
list_skipped() {
  local log="$build_dir/Testing/Temporary/LastTest.log"
  [[ -f "$log" ]] || return 0
  awk '
    /^[0-9]+\/[0-9]+ Test: / { name = $3; reason = ""; skipped = 0; next }
    /^SKIP: / { reason = substr($0, 7); skipped = 1 }
    after_skipped { reason = $0; after_skipped = 0 }
    /: Skipped$/ { after_skipped = 1 }
    /^Skip regular expression found/ { skipped = 1 }
    /"[^"]*" end time:/ { if (skipped) printf "  %s: %s\n", name, reason; skipped = 0 }
  ' "$log" >"$build_dir/skipped-tests.txt"
  if [[ -s "$build_dir/skipped-tests.txt" ]]; then
    echo "test: $(wc -l <"$build_dir/skipped-tests.txt") test(s) skipped (allowed without CI=true):" >&2
    cat "$build_dir/skipped-tests.txt" >&2
  fi
}

scripts/setup.sh
echo "test: running: ctest --test-dir $build_dir --output-on-failure -j2 $*" >&2
status=0
ctest --test-dir "$build_dir" --output-on-failure -j2 "$@" || status=$?
list_skipped

# Fuzzing in CI: every target 30 s from its seed corpus (scripts/fuzz.sh).
if [[ "${CI:-}" == "true" && -z "${AUTOPAR_SANITIZE:-}" && $# -eq 0 ]]; then
  echo "test: running: scripts/fuzz.sh 30" >&2
  scripts/fuzz.sh 30 || status=$?
fi
exit "$status"
