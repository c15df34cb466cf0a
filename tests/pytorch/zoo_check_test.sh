#!/usr/bin/env bash
# Exports corpus model MODEL (bench/model_zoo/corpus.py, tiny) with its default
# dropout, runs it on NP ranks with --check (against autopar's single-process
# run of the same step: random ops draw the same numbers whatever the
# sharding), and expects the passing "check: ... OK" line.
#   zoo_check_test.sh AUTOPAR NP MODEL [autopar run args...]
set -u
cli=$1 np=$2 model=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 "$here/export_models.py" "$dir" --size tiny --no-values "$model" ||
  { echo "FAIL: export"; exit 1; }
grep -q '"op":"aten.bernoulli.p"' "$dir/$model.json" || { echo "FAIL: no dropout in $model"; exit 1; }
out=$(timeout $((200 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1})) mpirun --allow-run-as-root --oversubscribe -np "$np" -x OMP_NUM_THREADS=1 \
  -x OPENBLAS_NUM_THREADS=1 "$cli" run --graph "$dir/$model.json" --check "$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
echo "$out" | grep -q '^check: .*: OK$' || { echo "FAIL: no passing check line"; exit 1; }
if [[ " $* " == *" --recompute full "* ]]; then
  echo "$out" | grep -Eq '^run: .*, [0-9]+ whole layers recomputed' || { echo "FAIL: no layer recomputed"; exit 1; }
fi
