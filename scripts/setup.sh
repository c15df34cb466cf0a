#!/usr/bin/env bash
# Installs the Debian packages autopar uses (only the missing ones), then
# configures and builds the project. Safe to run again: installed packages are
# skipped without touching apt, and an existing build directory is built
# incrementally.
#
#   scripts/setup.sh [TARGET...]     no TARGET: build everything
#
# Environment:
#   CI=true            configure with -DAUTOPAR_WERROR=ON (warnings are errors)
#   AUTOPAR_BUILD_DIR  build directory (default: build)
#   AUTOPAR_JOBS       parallel build jobs (default: nproc)
#   AUTOPAR_SANITIZE   sanitizers to build with, e.g. address,undefined
#                      (scripts/test.sh --sanitize sets it and build-sanitize/)
#
# Supported: Debian 12 (bookworm). Installing needs root; building does not.
set -euo pipefail

log() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

# Debian packages the project uses. Keep sorted within each group.
PACKAGES=(
  # build tools
  cmake
  g++
  git
  ninja-build
  pkg-config
  # libraries and test framework
  coinor-libcbc-dev
  googletest
  libcli11-dev
  libfmt-dev
  libgtest-dev
  # OpenBLAS for libtorch's CPU matmuls: without it (--no-install-recommends) the
  # reference BLAS is used, ~15x slower (measured: 6.1 vs 95.7 GFLOP/s f32, 1 thread).
  libopenblas0-pthread
  libopenmpi-dev
  libtorch-dev
  nlohmann-json3-dev
  openmpi-bin
  # the PyTorch exporter (python/), run with /usr/bin/python3
  python3-torch
  python3-torchvision
  # reports: SVG through Graphviz, the HTML report checked in headless Chromium
  chromium
  graphviz
  # fuzzing (scripts/fuzz.sh): clang 14 with its libFuzzer and sanitizer runtimes
  clang-14
  libclang-rt-14-dev
  libfuzzer-14-dev
)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${AUTOPAR_BUILD_DIR:-build}"
jobs="${AUTOPAR_JOBS:-$(nproc)}"

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

install_packages() {
  command -v dpkg-query >/dev/null ||
    die "dpkg-query not found: this script supports Debian 12; install these packages yourself: ${PACKAGES[*]}"
  local missing=() package
  for package in "${PACKAGES[@]}"; do
    is_installed "$package" || missing+=("$package")
  done
  if ((${#missing[@]} == 0)); then
    log "all ${#PACKAGES[@]} Debian packages are installed"
    return
  fi
  log "missing Debian packages: ${missing[*]}"
  [[ "$(id -u)" == 0 ]] ||
    die "installing packages needs root; run as root, or: sudo apt-get install --no-install-recommends ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  log "running: apt-get update"
  apt-get update || die "apt-get update failed (network or apt sources?)"
  log "running: apt-get install -y --no-install-recommends ${missing[*]}"
  apt-get install -y --no-install-recommends "${missing[@]}" ||
    die "apt-get install failed for: ${missing[*]}"
  for package in "${missing[@]}"; do
    is_installed "$package" || die "package $package is still not installed after apt-get install"
  done
}

configure() {
  local cache="$build_dir/CMakeCache.txt"
  local args=(-S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release)
  [[ "${CI:-}" == "true" ]] && args+=(-DAUTOPAR_WERROR=ON)
  # scripts/test.sh --sanitize: its own build directory (build-sanitize), no benchmarks.
  [[ -n "${AUTOPAR_SANITIZE:-}" ]] &&
    args+=(-DAUTOPAR_SANITIZE="$AUTOPAR_SANITIZE" -DAUTOPAR_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)
  if [[ -f "$cache" ]]; then
    grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$cache" ||
      die "$build_dir/ was configured with another generator than Ninja; remove it (rm -rf $build_dir) and run again"
    # Reconfigure only when CI needs -Werror and the cache lacks it; otherwise the
    # build below re-runs CMake by itself when a CMakeLists changed.
    if [[ "${CI:-}" != "true" ]] || grep -q '^AUTOPAR_WERROR:BOOL=ON$' "$cache"; then
      log "$build_dir/ exists: building incrementally"
      return
    fi
  fi
  log "running: cmake ${args[*]}"
  cmake "${args[@]}" || die "cmake configure failed (see the messages above)"
}

build() {
  local args=(--build "$build_dir" -j "$jobs")
  (($# > 0)) && args+=(--target "$@")
  log "running: cmake ${args[*]}"
  cmake "${args[@]}" || die "build failed (see the compiler messages above)"
}

cd "$repo_root"
install_packages
configure
build "$@"
log "done: built in $repo_root/$build_dir"
