#!/usr/bin/env bash
# Launches `autopar run` under mpirun and checks the outcome.
#   spmd_run_test.sh AUTOPAR EXPECT NP PATTERN [autopar run args...]
# EXPECT:
#   ok      exit 0, the check line says OK (PATTERN "check") or the output
#           matches PATTERN, measured comm bytes equal the plan's
#   fail    exit non-zero within 20 s, output matches PATTERN (rank and op)
#   killed  exit non-zero within 20 s (a rank died; mpirun ends the job)
#   refuse  exit non-zero, every rank prints "refusing to run" and PATTERN
set -u
cli=$1 expect=$2 np=$3 pattern=$4
shift 4
start=$(date +%s)
out=$(timeout 200 mpirun --allow-run-as-root --oversubscribe -np "$np" \
  -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$cli" run "$@" 2>&1)
rc=$?
elapsed=$(($(date +%s) - start))
echo "$out"
echo "--- exit $rc after ${elapsed}s (expect $expect)"
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
    [ "$elapsed" -le 20 ] || fail "the job took ${elapsed}s to end (limit 20 s)"
    echo "$out" | grep -Eq "$pattern" || fail "no message matching: $pattern"
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
