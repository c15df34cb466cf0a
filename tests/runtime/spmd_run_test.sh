#!/usr/bin/env bash
# Launches `autopar run` under mpirun and checks the outcome.
#   spmd_run_test.sh AUTOPAR EXPECT NP PATTERN [autopar run args...]
# EXPECT:
#   ok      exit 0, the check line says OK (PATTERN "check") or the output
#           matches PATTERN, measured comm bytes equal the plan's
#   fail    exit non-zero within 20 s, output matches PATTERN (rank and op)
#   killed  exit non-zero within 20 s (a rank died; mpirun ends the job)
#   refuse  exit non-zero, every rank prints "refusing to run" and PATTERN
#   phase   exit non-zero within 10 s of the first output line matching PATTERN
#           (--inject-fault: the message naming the rank and the phase)
set -u
cli=$1 expect=$2 np=$3 pattern=$4
shift 4
# phase: every line stamped with its arrival time (stamp), checked by check_phase_end.
. "$(dirname "$0")/../support/fault_phase.sh"
start=$(date +%s)
launch=$EPOCHREALTIME
job=(timeout $((200 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1})) mpirun --allow-run-as-root --oversubscribe -np "$np"
     -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$cli" run "$@")
if [ "$expect" = phase ]; then
  out=$("${job[@]}" 2>&1 | stamp; exit "${PIPESTATUS[0]}")
else
  out=$("${job[@]}" 2>&1)
fi
rc=$?
end=$EPOCHREALTIME
elapsed=$(($(date +%s) - start))
seconds=$(awk -v a="$launch" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "$out"
echo "--- exit $rc after ${seconds}s (expect $expect)"
fail() { echo "FAIL: $*"; exit 1; }
case $expect in
  ok)
    [ "$rc" -eq 0 ] || fail "exit code $rc"
    if [ "$pattern" = check ]; then
      echo "$out" | grep -q '^check: .*: OK$' || fail "no passing check line"
    else
      echo "$out" | grep -Eq "$pattern" || fail "no line matching: $pattern"
    fi
    echo "$out" | grep -q '^comm bytes: measured == plan$' || fail "comm bytes differ from the plan"
    # Every per-collective line: measured calls and bytes equal the plan's.
    echo "$out" | awk '/^  [a-z_]+ +d[0-9]+: / {
        split($0, h, "|"); split(h[1], m, " "); split(h[2], p, " ");
        if (m[3] != p[1] || m[5] != p[3]) { print "mismatch: " $0; bad = 1 } }
        END { exit bad }' || fail "a collective's bytes differ from the plan"
    ;;
  fail | killed)
    [ "$rc" -ne 0 ] || fail "the job exited 0"
    [ "$rc" -ne 124 ] || fail "the job hung (timeout)"
    limit=$((20 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1}))  # longer in the sanitized build
    [ "$elapsed" -le "$limit" ] || fail "the job took ${elapsed}s to end (limit $limit s)"
    echo "$out" | grep -Eq "$pattern" || fail "no message matching: $pattern"
    ;;
  phase)
    check_phase_end "$rc" "$end" "$pattern" "$out"
    ;;
  refuse)
    [ "$rc" -ne 0 ] || fail "the job exited 0"
    n=$(echo "$out" | grep -c "refusing to run: .*$pattern")
    [ "$n" -eq "$np" ] || fail "$n of $np ranks printed the refusal ($pattern)"
    echo "$out" | grep -q '^step ' && fail "computed before refusing"
    ;;
  *) fail "unknown expectation $expect" ;;
esac
echo PASS
