#!/usr/bin/env bash
# Launches a 3-D `autopar run --pipeline ...` (or --plan with a pipeline) under
# mpirun and checks the outcome.
#   grid_run_test.sh AUTOPAR EXPECT NP PATTERN [autopar run args...]
# EXPECT:
#   ok      exit 0; per step a "step K loss", a passing loss-and-gradients check
#           line and a passing parameter check line; every rank's measured peak
#           beside the memory model's and a passing memory check (within 5%);
#           every step's measured time beside the prediction; a line matching
#           PATTERN unless PATTERN is "check"
#   refuse  exit non-zero within 60 s, every rank prints "refusing to run:" and
#           PATTERN, no step ran
# Args may contain @EXPORT:MODEL@: the model exported by
# tests/pytorch/export_models.py into a temporary folder, replaced by its JSON
# path (exit 77, CTest's skip, when /usr/bin/python3 has no torch; a failure
# under CI=true), and
# @PLAN:ARGS@ (ARGS with , for spaces): `autopar plan ARGS --format json` written
# to a temporary file, replaced by its path.
set -u
cli=$1 expect=$2 np=$3 pattern=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/require.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args=()
for a in "$@"; do
  if [[ $a == @EXPORT:*@ ]]; then
    model=${a#@EXPORT:}; model=${model%@}
    require_or_skip "/usr/bin/python3 -c 'import torch'" "/usr/bin/python3 cannot import torch (apt install python3-torch)"
    /usr/bin/python3 "$here/../pytorch/export_models.py" "$dir" "$model" || { echo "FAIL: export"; exit 1; }
    a=$dir/$model.json
  elif [[ $a == @PLAN:*@ ]]; then
    plan=${a#@PLAN:}; plan=${plan%@}
    # shellcheck disable=SC2086
    "$cli" plan ${plan//,/ } --format json --out "$dir/plan.json" || { echo "FAIL: plan"; exit 1; }
    a=$dir/plan.json
  fi
  args+=("$a")
done
start=$(date +%s)
out=$(timeout $((240 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1})) mpirun --allow-run-as-root --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 \
      -np "$np" "$cli" run "${args[@]}" 2>&1)
rc=$?
elapsed=$(($(date +%s) - start))
echo "$out"
echo "--- exit $rc after ${elapsed}s (expect $expect)"
fail() { echo "FAIL: $*"; exit 1; }
case $expect in
  ok)
    [ "$rc" -eq 0 ] || fail "exit code $rc"
    steps=$(echo "$out" | grep -c '^step [0-9]* loss ')
    checks=$(echo "$out" | grep -c '^check: step .*, loss and gradients: .*: OK$')
    param_checks=$(echo "$out" | grep -c '^params check: step .*: OK$')
    [ "$steps" -ge 1 ] || fail "no step line"
    [ "$checks" -eq "$steps" ] || fail "$checks passing check lines for $steps steps"
    [ "$param_checks" -eq "$steps" ] || fail "$param_checks passing parameter check lines for $steps steps"
    times=$(echo "$out" | grep -c '^step [0-9]* time .* ms, bubble .*; predicted .* ms, bubble ')
    [ "$times" -eq "$steps" ] || fail "$times step time lines for $steps steps"
    ranks=$(echo "$out" | grep -c '^peak memory rank [0-9]* (pipeline rank [0-9]*): .* MiB (held tensors, [0-9]* B), model predicts ')
    [ "$ranks" -eq "$np" ] || fail "$ranks peak memory lines for $np ranks"
    echo "$out" | grep -q '^memory check: .*: OK$' || fail "no passing memory check"
    [ "$pattern" = check ] || echo "$out" | grep -Eq -- "$pattern" || fail "no line matching: $pattern"
    ;;
  refuse)
    [ "$rc" -ne 0 ] || fail "the job exited 0"
    [ "$rc" -ne 124 ] || fail "the job hung (timeout)"
    limit=$((60 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1}))  # longer in the sanitized build
    [ "$elapsed" -le "$limit" ] || fail "the job took ${elapsed}s to end (limit $limit s: a hang)"
    n=$(echo "$out" | grep -c "refusing to run: .*$pattern")
    [ "$n" -eq "$np" ] || fail "$n of $np ranks printed the refusal ($pattern)"
    echo "$out" | grep -q '^step ' && fail "computed before refusing"
    ;;
  *) fail "unknown expectation $expect" ;;
esac
echo PASS
