#!/usr/bin/env bash
# Planner sweep (issue #17): every model on every mesh under three memory
# budgets, planned twice. The table in bench/RESULTS.md ("Planner sweep")
# comes from it.
#
#   bench/plan_sweep.sh OUTDIR [MODEL...] [-- MESH...]
#
# Models: mlp, llama3-debugmodel, llama3-8b, llama3-8b-l4 (4 layers),
# llama3-70b, llama3-405b, tlm (an imported transformer, exported with
# python/autopar_export.py), resnet18 (an imported CNN). Meshes default to
# 4 8 2x4 4x4 6x8 8x8 16x8 2x2x2 4x4x4 8x8x8 on H100s.
# Budgets: unbounded (1 PB), 80 GB (the H100 profile's), and "tight": 90% of
# the 80 GB plan's peak, so that plan no longer fits and the solver must
# choose another (or prove none fits). An EVEN=1 environment adds
# --even-only rows for the meshes a dim does not divide (6x8).
#
# Columns: status, gap, best bound and objective (ms), ILP variables, the
# solve's wall time (the whole `autopar plan` command, graph build included),
# the predicted step time, peak memory, fits, uneven nodes, and whether a
# second run wrote the same plan bytes. Plans are written without timings so
# they can be compared with cmp. TIME_LIMIT=S passes --time-limit S to every
# plan (a row it stops says "feasible (time limit)", and its bytes may differ).
# Pause other work while it runs.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
autopar="${AUTOPAR:-$repo/build/tools/autopar/autopar}"
out="${1:?usage: bench/plan_sweep.sh OUTDIR [MODEL...] [-- MESH...]}"
shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"

models=()
meshes=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do models+=("$1"); shift; done
if [ $# -gt 0 ]; then shift; meshes=("$@"); fi
[ ${#models[@]} -gt 0 ] || models=(mlp llama3-debugmodel llama3-8b llama3-8b-l4 llama3-70b llama3-405b tlm resnet18)
[ ${#meshes[@]} -gt 0 ] || meshes=(4 8 2x4 4x4 6x8 8x8 16x8 2x2x2 4x4x4 8x8x8)

export_graph() {  # name, then autopar_export.py arguments
  local name=$1
  shift
  [ -f "$out/$name.json" ] || /usr/bin/python3 "$repo/python/autopar_export.py" --out "$out/$name.json" "$@" >/dev/null
}

source_of() {
  case $1 in
    mlp | llama3-debugmodel | llama3-8b | llama3-70b | llama3-405b) echo "--model $1" ;;
    llama3-8b-l4) echo "--model llama3-8b --layers 4" ;;
    tlm)
      export_graph tlm --model transformer_lm --vocab 50257 --dim 768 --heads 12 --layers 4 \
        --hidden 3072 --seq 1024 --batch 8
      echo "--graph $out/tlm.json" ;;
    resnet18)
      export_graph resnet18 --model resnet18 --batch 64 --image 224 --classes 1000
      echo "--graph $out/resnet18.json" ;;
    *) echo "unknown model '$1'" >&2; exit 2 ;;
  esac
}

# The first value of "key" in a plan file's solver or summary object.
field() {  # file, section, key
  # Empty when absent (an infeasible plan has no step time), not a failure.
  { sed -n "/^ \"$2\": {/,/^ }/p" "$1" | grep -m1 "^  \"$3\":" || true; } |
    sed -E 's/^[^:]*: *//; s/,$//; s/"//g'
}

# Plans one case twice; prints one table row.
plan_row() {  # model, mesh, budget label, extra flags...
  local model=$1 mesh=$2 label=$3
  shift 3
  local tag="${model}_${mesh}_${label}"
  tag="${tag// /_}"
  local a="$out/$tag.a.json" b="$out/$tag.b.json"
  local start end rc=0
  # shellcheck disable=SC2046
  start=$(date +%s.%N)
  "$autopar" plan $(source_of "$model") --mesh "$mesh" --hardware h100 --format json --quiet \
    ${TIME_LIMIT:+--time-limit "$TIME_LIMIT"} --out "$a" "$@" 2>"$out/$tag.err" || rc=$?
  end=$(date +%s.%N)
  # shellcheck disable=SC2046
  "$autopar" plan $(source_of "$model") --mesh "$mesh" --hardware h100 --format json --quiet \
    ${TIME_LIMIT:+--time-limit "$TIME_LIMIT"} --out "$b" "$@" 2>>"$out/$tag.err" || true
  local seconds same
  seconds=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
  same=$(cmp -s "$a" "$b" && echo yes || echo NO)
  if [ ! -s "$a" ]; then
    printf '| %s | %s | %s | error (rc %s): %s |||||||||| \n' "$model" "$mesh" "$label" "$rc" \
      "$(head -c 160 "$out/$tag.err" | tr '\n|' '  ')"
    return
  fi
  local step peak fits uneven
  step=$(field "$a" summary step_time_s)
  peak=$(field "$a" summary peak_memory_bytes)
  fits=$(field "$a" summary fits)
  uneven=$(field "$a" summary uneven_nodes)
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
    "$model" "$mesh" "$label" "$(field "$a" solver status)" "$(field "$a" solver gap)" \
    "$(awk -v x="$(field "$a" solver best_bound)" 'BEGIN { printf "%.3f", x * 1e3 }')" \
    "$(awk -v x="$(field "$a" solver objective)" 'BEGIN { printf "%.3f", x * 1e3 }')" \
    "$(field "$a" solver variables)" "$seconds" \
    "$(awk -v x="$step" 'BEGIN { if (x == "") print "-"; else printf "%.3f", x * 1e3 }')" \
    "$(awk -v x="$peak" 'BEGIN { if (x == "") print "-"; else printf "%.2f", x / 2^30 }')" \
    "${fits:--}" "${uneven:--}" "$same"
  echo "$peak" >"$out/$tag.peak"
}

echo "# bench/plan_sweep.sh on $(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ); load: $(uptime | sed 's/.*load average: //')"
echo "| model | mesh | budget | status | gap | bound (ms) | objective (ms) | variables | time (s) | step (ms) | peak (GiB) | fits | uneven nodes | same bytes |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for model in "${models[@]}"; do
  for mesh in "${meshes[@]}"; do
    plan_row "$model" "$mesh" unbounded --memory-gb 1000000
    plan_row "$model" "$mesh" "80 GB"
    peak=$(cat "$out/${model}_${mesh}_80_GB.peak" 2>/dev/null || true)
    if [ -n "$peak" ]; then
      tight=$(awk -v p="$peak" 'BEGIN { printf "%.6f", p * 0.9 / 1e9 }')
      plan_row "$model" "$mesh" "tight ${tight} GB" --memory-gb "$tight"
    fi
    if [ "${EVEN:-0}" = 1 ]; then plan_row "$model" "$mesh" "80 GB even-only" --even-only; fi
  done
done
echo "# load after: $(uptime | sed 's/.*load average: //')"
