#!/usr/bin/env bash
# The same `autopar plan` run twice beside CPU-burning processes writes
# byte-identical plan files (issue #15): a work limit, not the clock, decides
# where the search stops. mlp on 2x4 with 0.25 MB per device needs 4
# branch-and-bound nodes to prove its optimum when CBC branches on the whole
# model (--no-reduced-cost-fixing); --max-nodes 2 stops it first, on a busy
# machine as on an idle one.
#
#   plan_under_load_test.sh AUTOPAR
set -euo pipefail

autopar="$1"
dir="$(mktemp -d)"
burners=()
cleanup() {
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

for _ in 1 2 3; do
  sh -c 'while :; do :; done' &
  burners+=("$!")
done

args=(plan --quiet --model mlp --mesh 2x4 --memory-gb 0.00025 --max-nodes 2 --no-reduced-cost-fixing --format json)
"$autopar" "${args[@]}" --out "$dir/first.json"
"$autopar" "${args[@]}" --out "$dir/second.json"

if ! grep -q '"stopped_by": "node_limit"' "$dir/first.json"; then
  echo "FAIL: expected the node limit to stop the search:" >&2
  grep -A3 '"solver"' "$dir/first.json" >&2
  exit 1
fi
cmp "$dir/first.json" "$dir/second.json"
echo "the two plans are byte-identical ($(wc -c < "$dir/first.json") bytes), stopped by the node limit"
