#!/usr/bin/env bash
# Faults at every phase (issue #18): every (command, kind, phase) case of the
# hidden `--inject-fault KIND:PHASE:RANK` (docs/runtime.md, "Faults") under
# mpirun. The table in bench/RESULTS.md ("Faults at every phase") comes from it.
#
#   bench/fault_sweep.sh OUTDIR [COMMAND...]     COMMAND: run, run-pp, pipeline (default: all)
#
# Per case: the seconds from launch to the end of the job (mpirun returned)
# and from the fault's message to the end (every output line is stamped as it
# arrives), the exit code, and whether the job said which rank and phase:
# fail: "rank R of N: ... injected failure in phase P"; kill: the dying rank's
# "rank R of N: killed by SIGKILL in phase P", and mpirun's "process rank R
# ... exited on signal 9" (which names the rank without any help from
# autopar), and how many surviving ranks reported their phase on SIGTERM. A
# case passes when the job ends non-zero within LIMIT seconds (default 10)
# of the fault, with that message. The launch's share (MPI and libtorch
# start-up, the plan) depends on the ranks per core and the machine's load:
# it is reported, not bounded. Phases a command does not have are run too:
# every rank must refuse them, naming the phase.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
autopar="${AUTOPAR:-$repo/build/tools/autopar/autopar-full}"
out="${1:?usage: bench/fault_sweep.sh OUTDIR [run|run-pp|pipeline...]}"
shift
commands=("$@")
[ ${#commands[@]} -gt 0 ] || commands=(run run-pp pipeline)
limit=${LIMIT:-10}
mkdir -p "$out"
# A copy: a rebuild of the shared build directory during the sweep cannot break it.
cp "$autopar" "$out/autopar-full"
autopar="$out/autopar-full"
mpirun=(timeout 60 mpirun --allow-run-as-root --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
phases=(startup shape-inference first-forward collective send optimizer-step)

# The job of each command: ranks, the rank that faults, the arguments.
job() {
  case $1 in
    run) echo "4 2 run --model mlp --mesh 2x2 --baseline ddp --steps 2" ;;
    run-pp) echo "4 3 run --model mlp --mesh 2x2 --pipeline 2 --steps 2" ;;
    pipeline) echo "4 1 pipeline --model mlp --layers 4 --schedule 1f1b --microbatches 4 --steps 2" ;;
  esac
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
echo "load before: $(uptime | sed 's/.*load average: //')"
echo "autopar: $autopar; limit ${limit} s from the fault to the end of the job"
echo
echo "| command | kind | phase | launch to end (s) | fault message to end (s) | exit | mpirun names the rank | survivors' SIGTERM reports | verdict | message |"
echo "|---|---|---|---|---|---|---|---|---|---|"
failures=0
for command in "${commands[@]}"; do
  read -r np rank args <<< "$(job "$command")"
  for kind in fail kill; do
    for phase in "${phases[@]}"; do
      log="$out/$command.$kind.$phase.log"
      start=$EPOCHREALTIME
      # shellcheck disable=SC2086
      "${mpirun[@]}" -np "$np" "$autopar" $args --inject-fault "$kind:$phase:$rank" 2>&1 |
        while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$log"
      rc=${PIPESTATUS[0]}
      end=$EPOCHREALTIME
      total=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
      if [ "$kind" = fail ]; then
        want="rank $rank of $np( \\([^)]*\\))?: .*injected failure in phase $phase "
      else
        want="rank $rank of $np: killed by SIGKILL in phase $phase "
      fi
      refusal="refusing to run: .* has no $phase phase"
      line=$(grep -m1 -E "$want" "$log")
      after="-"
      verdict=ok
      if [ -z "$line" ] && [ "$(grep -c -E "$refusal" "$log")" -eq "$np" ]; then
        line=$(grep -m1 -E "$refusal" "$log")
        verdict="n/a (every rank refuses)"
      elif [ -n "$line" ]; then
        after=$(awk -v t="${line%% *}" -v b="$end" 'BEGIN { printf "%.1f", b - t }')
      else
        verdict="FAIL: no message naming rank $rank and $phase"
      fi
      named=no
      grep -q "process rank $rank with PID .* exited on signal 9" "$log" && named=yes
      [ "$kind" = kill ] || named="-"
      survivors=$(grep -c "ended by SIGTERM (mpirun ends the job) in phase" "$log")
      [ "$rc" -ne 0 ] || verdict="FAIL: exit 0"
      [ "$rc" -ne 124 ] || verdict="FAIL: hung (timeout)"
      [ "$after" = - ] || ! awk -v t="$after" -v l="$limit" 'BEGIN { exit !(t > l) }' || verdict="FAIL: over ${limit} s"
      [[ $verdict == FAIL* ]] && failures=$((failures + 1))
      message=$(echo "${line#* }" | sed 's/|/\\|/g')
      echo "| $command | $kind | $phase | $total | $after | $rc | $named | $survivors | $verdict | \`$message\` |"
    done
  done
done
echo
echo "load after: $(uptime | sed 's/.*load average: //')"
echo "failures: $failures"
[ "$failures" -eq 0 ]
