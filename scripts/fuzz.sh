#!/usr/bin/env bash
# Fuzzes every loader: builds the libFuzzer targets (fuzz/<name>_fuzz.cc, with
# AddressSanitizer and UndefinedBehaviorSanitizer, clang 14) in build-fuzz/,
# then runs each for SECONDS, two at a time, from a scratch copy of its seed
# corpus and regressions (the committed corpus never grows).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   SECONDS per target (default 30);
#                                            TARGET: graph, plan, ... (default: all)
#
# A crash, a sanitizer report, a hang (one input over 10 s) or running out of
# memory (over 2048 MB) fails the run: the input is kept under
# build-fuzz/crashes/<target>/, and the script exits 1 naming it. Reproduce
# with build-fuzz/fuzz/<target>_fuzz INPUT; once fixed, copy the input to
# fuzz/regressions/<target>/ so `ctest -R fuzz_replay` replays it.
#
# Environment:
#   AUTOPAR_BUILD_DIR  the normal build, whose aten schema list this build uses (default: build)
#   AUTOPAR_JOBS       parallel build jobs (default: 2)
#   CI=true            warnings are errors, as in the normal build
set -euo pipefail

log() { echo "fuzz: $*" >&2; }
die() { echo "fuzz: error: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fuzz_dir="build-fuzz"
main_build="${AUTOPAR_BUILD_DIR:-build}"
jobs="${AUTOPAR_JOBS:-2}"
parallel=2  # fuzzers at a time: one per core of the 2-core CI machine
cd "$repo_root"

seconds=30
if (($# > 0)); then
  case "$1" in
    -h|--help) usage; exit 0 ;;
    *[!0-9]*|'') ;;
    *) seconds="$1"; shift ;;
  esac
fi
((seconds > 0)) || die "SECONDS must be a positive whole number, got '$seconds'"
all_targets=()
for source in fuzz/*_fuzz.cc; do
  name="${source#fuzz/}"
  all_targets+=("${name%_fuzz.cc}")
done
targets=("$@")
((${#targets[@]} > 0)) || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $target "* ]] ||
    die "unknown target '$target' (known: ${all_targets[*]}; usage: scripts/fuzz.sh --help)"
done

# clang, libFuzzer and the aten schema list come from scripts/setup.sh, which
# installs missing packages and builds autopar_ir in the normal build.
schemas="$repo_root/$main_build/src/ir/aten_schemas.inc"
fuzzer_runtime="$(ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)"
if ! command -v clang++-14 >/dev/null || [[ -z "$fuzzer_runtime" ]] ||
   [[ "$(dpkg-query -W -f='${Status}' libfuzzer-14-dev 2>/dev/null || true)" != "install ok installed" ]] ||
   [[ ! -f "$schemas" ]]; then
  log "clang 14, libFuzzer or $main_build/src/ir/aten_schemas.inc missing: running scripts/setup.sh autopar_ir"
  scripts/setup.sh autopar_ir
fi
[[ -f "$schemas" ]] || die "scripts/setup.sh did not write $schemas"

if [[ ! -f "$fuzz_dir/CMakeCache.txt" ]]; then
  args=(-S . -B "$fuzz_dir" -G Ninja -DAUTOPAR_FUZZ=ON -DAUTOPAR_ATEN_SCHEMAS="$schemas"
        -DCMAKE_CXX_COMPILER=clang++-14
        # Assertions on (a broken invariant is a finding); -O0: see fuzz/fuzz_build.cmake.
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -gline-tables-only")
  [[ "${CI:-}" == "true" ]] && args+=(-DAUTOPAR_WERROR=ON)
  log "running: cmake ${args[*]}"
  cmake "${args[@]}" || die "cmake configure of $fuzz_dir/ failed (see above)"
fi
build_args=(--build "$fuzz_dir" -j "$jobs" --target)
for target in "${targets[@]}"; do build_args+=("${target}_fuzz"); done
log "running: cmake ${build_args[*]}"
build_start=$(date +%s)
cmake "${build_args[@]}" || die "building the fuzz targets failed (see the compiler messages above)"
log "fuzz targets built in $(($(date +%s) - build_start)) s"

scratch="$(mktemp -d /tmp/autopar-fuzz.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
touch "$scratch/started"  # inputs saved after this are this run's findings
mkdir -p "$fuzz_dir/logs"

# Runs one target in the background; its exit status lands in $scratch/<target>.rc.
start_target() {
  local target="$1" corpus="$scratch/$1/corpus" crashes="$fuzz_dir/crashes/$1"
  mkdir -p "$corpus" "$crashes"
  cp fuzz/corpus/"$target"/* "$corpus"/
  [[ -d fuzz/regressions/$target ]] && cp fuzz/regressions/"$target"/* "$corpus"/ 2>/dev/null
  # A dictionary of the format's tokens and of numbers that overflow.
  case "$target" in
    pins|schedule) cat fuzz/dict/text.dict fuzz/dict/numbers.dict >"$scratch/$target.dict" ;;
    *) cat fuzz/dict/json.dict fuzz/dict/numbers.dict >"$scratch/$target.dict" ;;
  esac
  (
    start=${EPOCHREALTIME/./}
    rc=0
    "$fuzz_dir/fuzz/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -dict="$scratch/$target.dict" -artifact_prefix="$crashes/" "$corpus" \
      >"$fuzz_dir/logs/$target.log" 2>&1 || rc=$?
    end=${EPOCHREALTIME/./}
    echo "$rc $(((end - start) / 1000))" >"$scratch/$target.rc"  # milliseconds
  ) &
}

log "running ${#targets[@]} targets for $seconds s each, $parallel at a time (logs: $fuzz_dir/logs/)"
running=0
for target in "${targets[@]}"; do
  if ((running == parallel)); then
    wait -n || true
    running=$((running - 1))
  fi
  start_target "$target"
  running=$((running + 1))
done
wait || true

failed=()
printf '%-14s %12s %8s %8s  %s\n' target executions exec/s seconds result
for target in "${targets[@]}"; do
  read -r rc wall_ms <"$scratch/$target.rc"
  stats="$fuzz_dir/logs/$target.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$stats" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$stats" | tail -1)
  result=ok
  if [[ "$rc" != 0 ]]; then
    input=$(find "$fuzz_dir/crashes/$target" -maxdepth 1 -type f -newer "$scratch/started" \
              \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | head -1)
    kind="${input##*/}"; kind="${kind%%-*}"
    result="FAILED (exit $rc${kind:+, $kind}): ${input:-no input saved, see $stats}"
    failed+=("$target: $result")
  fi
  printf '%-14s %12s %8s %8s  %s\n' "$target" "${execs:-?}" "${rate:-?}" \
    "$((wall_ms / 1000)).$((wall_ms % 1000 / 100))" "$result"
done
if ((${#failed[@]} > 0)); then
  for line in "${failed[@]}"; do
    target="${line%%:*}"
    echo "--- $fuzz_dir/logs/$target.log (last 40 lines)" >&2
    tail -40 "$fuzz_dir/logs/$target.log" >&2
  done
  printf 'fuzz: error: %s\n' "${failed[@]}" >&2
  die "${#failed[@]} of ${#targets[@]} targets failed; reproduce with $fuzz_dir/fuzz/TARGET_fuzz INPUT"
fi
log "all ${#targets[@]} targets ran $seconds s without a finding"
