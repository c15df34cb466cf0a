# Sourced by the MPI job tests (spmd_run_test.sh, pipeline_run_test.sh) for
# their `phase` expectation: a job with --inject-fault must end within 10 s of
# the first output line naming the rank and the phase.

# Stamps every line with its arrival time ($EPOCHREALTIME).
stamp() { while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }

# check_phase_end RC END PATTERN OUT: the job failed (not a timeout), a line of
# the stamped OUT matches PATTERN, and END (the job's end time) is at most 10 s
# after it. Prints FAIL and exits 1 otherwise.
check_phase_end() {
  local rc=$1 end=$2 pattern=$3 out=$4 line after
  [ "$rc" -ne 0 ] || { echo "FAIL: the job exited 0"; exit 1; }
  [ "$rc" -ne 124 ] || { echo "FAIL: the job hung (timeout)"; exit 1; }
  line=$(echo "$out" | grep -m1 -E "$pattern") || { echo "FAIL: no message matching: $pattern"; exit 1; }
  after=$(awk -v a="${line%% *}" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  echo "--- the job ended ${after}s after: ${line#* }"
  # 10 s, the promise; longer in the sanitized build (AUTOPAR_TEST_TIMEOUT_SCALE).
  local limit=$((10 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1}))
  awk -v t="$after" -v limit="$limit" 'BEGIN { exit !(t <= limit) }' ||
    { echo "FAIL: the job ended ${after}s after the fault (limit $limit s)"; exit 1; }
}
