#!/usr/bin/env bash
# Recomputation chosen by the ILP (issue #19): at budgets where it matters,
# --recompute none, auto and full side by side (step time, peak, fits,
# tensors recomputed, planning time), and every expert baseline keeping every
# activation and with full recomputation (autopar compare
# --baseline-recompute both). The table in bench/RESULTS.md ("Recomputation
# chosen by the ILP") comes from it.
#
#   bench/recompute_table.sh OUTDIR [CASE...]
#
# A case is "MODEL MESH BUDGET_GB [MODEL ARGS...]" in one word with commas,
# e.g. "llama3-70b,8x8,40"; the default cases are the issue's. Pause other
# work while it runs: planning times are wall clock.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
autopar="${AUTOPAR:-$repo/build/tools/autopar/autopar}"
out="${1:?usage: bench/recompute_table.sh OUTDIR [CASE...]}"
shift
mkdir -p "$out"
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(llama3-70b,8x8,40 llama3-70b,8x8,60 llama3-8b,2x4,40 llama3-8b,2x4,25)

echo "# bench/recompute_table.sh on $(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| model | mesh | budget | plan | step (ms) | peak | fits | recomputed | plan time (s) |"
echo "|---|---|---|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
  IFS=, read -r model mesh budget extra <<<"$c"
  args=(--model "$model" --mesh "$mesh" --memory-gb "$budget" --hardware h100 --quiet)
  if [ -n "${extra:-}" ]; then
    read -r -a more <<<"${extra//,/ }"
    args+=("${more[@]}")
  fi
  for mode in none auto full; do
    file="$out/$model-$mesh-$budget-$mode.json"
    start=$(date +%s.%N)
    "$autopar" plan "${args[@]}" --recompute "$mode" --format json --out "$file" 2>/dev/null || true
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    /usr/bin/python3 - "$file" "$model" "$mesh" "$budget" "$mode" "$seconds" <<'PY'
import json, sys, os
path, model, mesh, budget, mode, seconds = sys.argv[1:]
gib = 1024 ** 3
if not os.path.exists(path):
    print(f"| {model} | {mesh} | {budget} GB | {mode} | - | - | no | - | {seconds} |")
    sys.exit()
p = json.load(open(path))
s = p.get("summary", {})
if "nodes" not in p:
    print(f"| {model} | {mesh} | {budget} GB | {mode} | - | - | no | - | {seconds} |")
    sys.exit()
r = s["recompute"]
rec = f"{r['layers']} layers ({r['tensors']} nodes)" if r.get("layers") else str(r["tensors"])
print(f"| {model} | {mesh} | {budget} GB | {mode} | {s['step_time_s'] * 1e3:.3f} | "
      f"{s['peak_memory_bytes'] / gib:.2f} GiB | {'yes' if s['fits'] else 'no'} | "
      f"{rec} | {seconds} |")
PY
  done
  "$autopar" compare "${args[@]}" --recompute auto --baseline-recompute both >"$out/$model-$mesh-$budget-compare.txt" 2>&1 || true
  awk -v m="$model" -v me="$mesh" -v b="$budget" 'NR > 2 && NF >= 7 && $1 != "solved+auto-ac" && $0 !~ /not applicable/ {
      if ($2 == "-") { fits = "no"; step = "-"; peak = "-"; rec = "-" }
      else { fits = $NF; step = $2; peak = $8 " " $9; rec = ($11 == "layers") ? $10 " layers" : $10 }
      printf "| %s | %s | %s GB | %s | %s | %s | %s | %s | |\n", m, me, b, $1, step, peak, fits, rec }' \
    "$out/$model-$mesh-$budget-compare.txt"
done
