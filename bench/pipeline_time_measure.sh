#!/usr/bin/env bash
# Pipeline step time and bubble measured against predicted on 2 ranks (one
# per core), issue #16; the table in bench/RESULTS.md ("Pipeline step time:
# measured against predicted") comes from it.
#
#   bench/pipeline_time_measure.sh OUTDIR
#
# One `autopar calibrate --mesh 2` of llama3-debugmodel --layers 4 at the
# microbatch size (batch 8 / 8 microbatches = 1), then REPS (default 3) runs
# of STEPS steps (default 8) of `autopar pipeline` per schedule and of the 3-D
# `autopar run --mesh 2 --pipeline 2` (whole stages there: a 1-device group)
# with that profile. Prints per case the median of the runs' medians over
# steps 2..STEPS, their range, the prediction and the error, and the measured
# and predicted bubbles. Pause other work on the machine while it runs.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
autopar="${AUTOPAR:-$repo/build/tools/autopar/autopar-full}"
out="${1:?usage: bench/pipeline_time_measure.sh OUTDIR}"
mkdir -p "$out"
reps=${REPS:-3}
steps=${STEPS:-8}
mpirun=(mpirun --allow-run-as-root -np 2 -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
model=(--model llama3-debugmodel --layers 4)

"$autopar" calibrate --out "$out/calib.json" "${model[@]}" --batch 1 --mesh 2 2> "$out/calibrate.log" >/dev/null
grep -E "op calls timed" "$out/calibrate.log" || true

summarise() {  # case name, then the logs of its runs
  local name=$1
  shift
  /usr/bin/python3 - "$name" "$@" <<'PY'
import re, statistics, sys
name, logs = sys.argv[1], sys.argv[2:]
meds, bubbles, predicted, pbubble = [], [], None, None
for path in logs:
    times = []
    for line in open(path):
        m = re.match(r"step (\d+) time ([\d.]+) ms, bubble ([\d.]+)%.*predicted ([\d.]+) ms, bubble ([\d.]+)%", line)
        if m and int(m.group(1)) >= 2:
            times.append(float(m.group(2)))
            bubbles.append(float(m.group(3)))
            predicted, pbubble = float(m.group(4)), float(m.group(5))
    if times:
        meds.append(statistics.median(times))
if not meds:
    print(f"{name}: no step lines"); sys.exit(0)
med = statistics.median(meds)
print(f"{name:28s} measured {med:7.1f} ms ({min(meds):.1f}-{max(meds):.1f}), predicted {predicted:7.1f} ms, "
      f"error {(predicted - med) / med * 100:+6.1f}%; bubble measured {statistics.median(bubbles):.1f}% "
      f"predicted {pbubble:.1f}%")
PY
}

for schedule in gpipe 1f1b zb-h1; do
  logs=()
  for r in $(seq "$reps"); do
    log="$out/pipeline_${schedule}_$r.log"
    "${mpirun[@]}" "$autopar" pipeline "${model[@]}" --microbatches 8 --steps "$steps" --schedule "$schedule" \
      --hardware "$out/calib.json" > "$log" 2>&1
    logs+=("$log")
  done
  summarise "pipeline $schedule" "${logs[@]}"
done
for schedule in gpipe 1f1b zb-h1; do
  logs=()
  for r in $(seq "$reps"); do
    log="$out/run3d_${schedule}_$r.log"
    "${mpirun[@]}" "$autopar" run "${model[@]}" --mesh 2 --pipeline 2 --microbatches 8 --steps "$steps" \
      --schedule "$schedule" --optimizer sgd --hardware "$out/calib.json" > "$log" 2>&1
    logs+=("$log")
  done
  summarise "run --pipeline 2 $schedule" "${logs[@]}"
done
