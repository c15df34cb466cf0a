#!/usr/bin/env bash
# Launches `autopar pipeline` under mpirun and checks the outcome.
#   pipeline_run_test.sh AUTOPAR EXPECT NP PATTERN [autopar pipeline args...]
# EXPECT:
#   ok        exit 0, one passing check line per step, every rank's peak memory
#             beside the model's and a passing memory check (within 5%); a line
#             matching PATTERN unless PATTERN is "check"
#   refuse    exit non-zero within 60 s (startup under load included), every rank prints "refusing to run:" and PATTERN,
#             no step ran
#   disagree  like refuse, but only rank 0 is given --stage-shapes PATTERN_FILE (MPMD launch);
#             every rank must report the disagreement instead of hanging
#   phase     exit non-zero within 10 s of the first output line matching PATTERN
#             (--inject-fault: the message naming the rank and the phase)
set -u
cli=$1 expect=$2 np=$3 pattern=$4
shift 4
mpirun=(timeout $((200 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1})) mpirun --allow-run-as-root --oversubscribe -x OMP_NUM_THREADS=1
        -x OPENBLAS_NUM_THREADS=1)
# phase: every line stamped with its arrival time (stamp), checked by check_phase_end.
. "$(dirname "$0")/../support/fault_phase.sh"
start=$(date +%s)
launch=$EPOCHREALTIME
if [ "$expect" = disagree ]; then
  file=$pattern
  pattern="ranks disagree on pipeline shape inference"
  out=$("${mpirun[@]}" -np 1 "$cli" pipeline "$@" --stage-shapes "$file" : \
        -np $((np - 1)) "$cli" pipeline "$@" 2>&1)
elif [ "$expect" = phase ]; then
  out=$("${mpirun[@]}" -np "$np" "$cli" pipeline "$@" 2>&1 | stamp; exit "${PIPESTATUS[0]}")
else
  out=$("${mpirun[@]}" -np "$np" "$cli" pipeline "$@" 2>&1)
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
    steps=$(echo "$out" | grep -c '^step [0-9]* loss ')
    checks=$(echo "$out" | grep -c '^check: step .*: OK$')
    param_checks=$(echo "$out" | grep -c '^params check: step .*: OK$')
    [ "$steps" -ge 1 ] || fail "no step line"
    [ "$checks" -eq "$steps" ] || fail "$checks passing check lines for $steps steps"
    [ "$param_checks" -eq "$steps" ] || fail "$param_checks passing parameter check lines for $steps steps"
    ranks=$(echo "$out" | grep -c '^peak memory rank [0-9]*: .* MiB (held tensors, [0-9]* B), model predicts ')
    [ "$ranks" -eq "$np" ] || fail "$ranks peak memory lines for $np ranks"
    echo "$out" | grep -q '^memory check: .*: OK$' || fail "no passing memory check"
    [ "$pattern" = check ] || echo "$out" | grep -Eq -- "$pattern" || fail "no line matching: $pattern"
    ;;
  phase)
    check_phase_end "$rc" "$end" "$pattern" "$out"
    ;;
  refuse | disagree)
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
