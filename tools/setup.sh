#!/usr/bin/env bash
# gfi set-up: make sure the Debian packages gfi needs are present (installing
# them when run as root, otherwise printing the exact apt-get line), then
# configure and build into ./build. Sourced by tools/main.sh and tools/test.sh.
set -euo pipefail

GFI_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GFI_BUILD=${GFI_BUILD:-$GFI_ROOT/build}

# Everything gfi needs to build, test and draw its figures. r-base-core and
# r-cran-ks: the reference of the Gaussian bandwidth selectors (test select-ks;
# about 40 s to install on a Debian 12 machine). Open MPI: sweeps, mise --mc
# and large sums over processes (the mpi build feature is auto). Python: the
# package gfi (pyproject.toml, meson-python) and its tests (scipy and
# statsmodels are the peers; PyTorch, scikit-learn and hypothesis are the
# optional dependencies whose tests the suite runs: the torch op, the
# scikit-learn estimator protocol, the property-based battery). r-base-dev:
# the R package gfi (r/) is built and checked against ks by the suite.
GFI_PACKAGES=(build-essential git meson ninja-build pkg-config libgsl-dev libfftw3-dev gnuplot-nox
  r-base-core r-base-dev r-cran-ks openmpi-bin libopenmpi-dev
  python3-mesonpy python3-numpy python3-pytest python3-scipy python3-statsmodels python3-venv python3-pip
  python3-torch python3-sklearn python3-hypothesis)
# The sanitized test suite and the parsers' fuzzers (tools/sanitize.sh, run by
# CI): clang with libFuzzer and its OpenMP runtime.
GFI_SANITIZE_PACKAGES=(clang libclang-rt-dev libomp-dev)

gfi_missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

gfi_install_packages() {
  local missing
  mapfile -t missing < <(gfi_missing_packages "$@")
  ((${#missing[@]} == 0)) && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "gfi setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    echo "gfi setup: missing Debian packages. Run:" >&2
    echo "  sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
}

# meson builds libgfi_cuda when nvcc is on PATH; CUDA's default location is not.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

gfi_build() {
  if [ ! -f "$GFI_BUILD/build.ninja" ]; then
    meson setup "$GFI_BUILD" "$GFI_ROOT" >&2
  fi
  ninja -C "$GFI_BUILD" >&2
}

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "gfi setup: this script expects Debian (dpkg). Install: a C11 compiler, meson, ninja," >&2
  echo "  pkg-config, GSL, FFTW3 and gnuplot, then run: meson setup build && ninja -C build" >&2
  exit 1
fi
gfi_install_packages "${GFI_PACKAGES[@]}"
gfi_build
