#!/usr/bin/env bash
# Step time measured against predicted on 2 ranks (one per core), issue #15
# item 4; the table in bench/RESULTS.md ("Step time: measured against
# predicted") comes from it.
#
#   bench/step_time_measure.sh OUTDIR [CASE...]
#
# For each case: `autopar calibrate --mesh 2` on that graph, then
# `autopar run` of the solved plan and the fsdp and tp baselines with that
# profile, REPS times each (default 5) for STEPS steps (default 20). Prints
# one line per plan: the median of the runs' measured step times (each the
# median over its steps 2..STEPS, slowest rank), their range, the prediction
# and the error. Cases: mlp, mlp_b1024, llama3-debugmodel, transformer_lm (the
# test suite's export), tlm_big (an imported transformer the size of
# llama3-debugmodel). Pause other work on the machine while it runs.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
autopar="${AUTOPAR:-$repo/build/tools/autopar/autopar-full}"
out="${1:?usage: bench/step_time_measure.sh OUTDIR [CASE...]}"
shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"

export_graph() {  # name, then autopar_export.py arguments
  local name=$1
  shift
  [ -f "$out/$name.json" ] || /usr/bin/python3 "$repo/python/autopar_export.py" --out "$out/$name.json" "$@" >/dev/null
}

source_of() {
  case $1 in
    mlp) echo "--model mlp" ;;
    mlp_b1024) echo "--model mlp --batch 1024" ;;
    llama3-debugmodel) echo "--model llama3-debugmodel" ;;
    transformer_lm)
      export_graph transformer_lm --model transformer_lm --vocab 32 --dim 16 --heads 2 --layers 2 \
        --hidden 32 --seq 8 --batch 4
      echo "--graph $out/transformer_lm.json" ;;
    tlm_big)
      export_graph tlm_big --model transformer_lm --vocab 2048 --dim 256 --heads 8 --layers 4 \
        --hidden 1024 --seq 128 --batch 8
      echo "--graph $out/tlm_big.json" ;;
    *) echo "unknown case '$1' (mlp, mlp_b1024, llama3-debugmodel, transformer_lm, tlm_big)" >&2; exit 2 ;;
  esac
}

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(mlp mlp_b1024 llama3-debugmodel transformer_lm tlm_big)
cd "$out"
for m in "${cases[@]}"; do
  src=$(source_of "$m")
  # shellcheck disable=SC2086
  [ -f "calib-$m.json" ] || "$autopar" calibrate --out "calib-$m.json" $src --mesh 2 >"calib-$m.log" 2>&1
  for p in solved fsdp tp; do
    baseline=""
    [ $p = solved ] || baseline="--baseline $p"
    all="" pred=""
    for r in $(seq "${REPS:-5}"); do
      # shellcheck disable=SC2086
      mpirun --allow-run-as-root -np 2 -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$autopar" run $src \
        --mesh 2 --steps "${STEPS:-20}" $baseline --hardware "calib-$m.json" >"run-$m-$p-$r.out" 2>&1
      line=$(grep "measured step time" "run-$m-$p-$r.out")
      all="$all $(echo "$line" | sed -E 's/measured step time ([0-9.]+) ms.*/\1/')"
      pred=$(echo "$line" | sed -E 's/.*plan predicts ([0-9.]+) ms.*/\1/')
    done
    python3 -c "
import statistics
runs = [float(x) for x in '$all'.split()]
m, p = statistics.median(runs), $pred
print(f'$m $p measured {m:.3f} ms (runs {min(runs):.3f}-{max(runs):.3f}) predicted {p:.3f} ms {(p - m) / m * 100:+.1f}%')"
  done
done
