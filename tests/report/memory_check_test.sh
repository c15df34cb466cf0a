#!/usr/bin/env bash
# The memory estimator against the SPMD runtime's measured peak.
#   memory_check_test.sh AUTOPAR NP TOLERANCE_PERCENT [plan args...]
# Plans once with `autopar explain --memory` (the estimate) and runs the same
# plan (same options, deterministic solver) for 2 steps under mpirun. Passes
# when |estimate - measured| <= TOLERANCE % of measured (explain and run's
# prediction are the same model, memory/step_memory.h).
set -u
cli=$1 np=$2 tol=$3
shift 3
fail() { echo "FAIL: $*"; exit 1; }
est_out=$("$cli" explain --memory --quiet "$@" 2>&1) || fail "explain failed: $est_out"
echo "$est_out"
run_out=$(timeout $((300 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1})) mpirun --allow-run-as-root --oversubscribe -np "$np" \
  -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$cli" run --steps 2 "$@" 2>&1)
rc=$?
echo "$run_out"
[ "$rc" -eq 0 ] || fail "autopar run exited $rc"
est=$(echo "$est_out" | sed -n 's/^estimated peak per device: \([0-9.]*\) MiB.*/\1/p')
meas=$(echo "$run_out" | sed -n 's/^peak memory per rank \([0-9.]*\) MiB.*/\1/p')
[ -n "$est" ] || fail "no estimate line"
[ -n "$meas" ] || fail "no measured peak line"
awk -v e="$est" -v m="$meas" -v t="$tol" 'BEGIN {
  d = (e - m) / m * 100; printf "estimate %.3f MiB, measured %.3f MiB: %+.2f%% (tolerance %g%%)\n", e, m, d, t;
  exit (d <= t && d >= -t) ? 0 : 1 }' || fail "estimate and measurement differ by more than $tol%"
echo PASS
