#!/usr/bin/env bash
# Exports MODEL with PyTorch's values, runs it on NP ranks with
# --check-against-torch, and expects the "torch check: ... OK" line.
#   torch_check_test.sh AUTOPAR NP MODEL [autopar run args...]
# MODEL is one of export_models.py's CLI configs, or corpus:NAME for a model of
# bench/model_zoo/corpus.py at tiny size with every dropout off.
# Exit 77 (CTest: skipped) when /usr/bin/python3 cannot import torch; a failure under CI=true.
set -u
cli=$1 np=$2 model=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/require.sh"
require_or_skip "/usr/bin/python3 -c 'import torch'" "/usr/bin/python3 cannot import torch (apt install python3-torch)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [[ $model == corpus:* ]]; then
  model=${model#corpus:}
  /usr/bin/python3 "$here/export_models.py" "$dir" --size tiny --dropout0 "$model" ||
    { echo "FAIL: export"; exit 1; }
else
  /usr/bin/python3 "$here/export_models.py" "$dir" "$model" || { echo "FAIL: export"; exit 1; }
fi
out=$(timeout $((200 * ${AUTOPAR_TEST_TIMEOUT_SCALE:-1})) mpirun --allow-run-as-root --oversubscribe -np "$np" -x OMP_NUM_THREADS=1 \
  -x OPENBLAS_NUM_THREADS=1 "$cli" run --graph "$dir/$model.json" \
  --check-against-torch "$dir/$model.values" "$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
echo "$out" | grep -q '^torch check: .*: OK$' || { echo "FAIL: no passing torch check line"; exit 1; }
if [[ " $* " == *" --recompute full "* ]]; then
  echo "$out" | grep -Eq '^run: .*, [0-9]+ whole layers recomputed' || { echo "FAIL: no layer recomputed"; exit 1; }
fi
