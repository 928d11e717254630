#!/usr/bin/env bash
# Set up (packages, build) and run gfi's benchmarks: they print pair rates and
# ratios against peers measured in the same run (scipy, numpy and statsmodels from
# Debian's python3-scipy, python3-numpy and python3-statsmodels, run with
# /usr/bin/python3). Extra arguments go to
# 'meson test --benchmark' (e.g. a benchmark name). For a short run use
#   build/bench/bench_density --quick
#
#   bash tools/bench.sh fast [ARGS]
# runs the fast route's benchmarks (suite 'fast': bench_fast and
# bench_fast_mise, tables build/bench/fast_*.dat) against KDEpy's FFTKDE and
# fastKDE from PyPI, installed with pip into a virtual environment of Debian's
# python3 ($GFI_PEER_VENV, default build/peer-venv), then draws
# plots/fast_*.gp into build/bench (PNG and PDF). ARGS go to 'meson test'.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"

# The scipy peer: installed when root, otherwise the benchmark skips it and
# says so; here we print how to get it.
GFI_BENCH_PACKAGES=(python3-scipy python3-numpy python3-statsmodels python3-venv)
mapfile -t gfi_bench_missing < <(gfi_missing_packages "${GFI_BENCH_PACKAGES[@]}")
if ((${#gfi_bench_missing[@]} > 0)); then
  if [ "$(id -u)" = 0 ]; then
    gfi_install_packages "${gfi_bench_missing[@]}"
  else
    echo "gfi bench: the scipy and statsmodels peers need Debian packages; they are skipped without them. Run:" >&2
    echo "  sudo apt-get install ${gfi_bench_missing[*]}" >&2
  fi
fi

# KDEpy and fastKDE (PyPI only): a virtual environment of /usr/bin/python3,
# versions pinned so that reruns time the same code.
GFI_PEER_PIP=(KDEpy==1.1.12 fastkde==2.1.5)
gfi_peer_venv() {
  local venv=${GFI_PEER_VENV:-$GFI_BUILD/peer-venv}
  if ! "$venv/bin/python" -c "import KDEpy, fastkde" >/dev/null 2>&1; then
    echo "gfi bench: installing ${GFI_PEER_PIP[*]} into $venv" >&2
    /usr/bin/python3 -m venv "$venv" >&2 &&
      "$venv/bin/pip" install -q "${GFI_PEER_PIP[@]}" >&2 ||
      echo "gfi bench: could not set up $venv; the KDEpy/fastKDE peers are skipped" >&2
  fi
  export GFI_PEER_PYTHON="$venv/bin/python"
}

if [ "${1:-}" = fast ]; then
  shift
  gfi_peer_venv
  echo "gfi bench fast: load before the run: $(uptime)" >&2
  meson test -C "$GFI_BUILD" --benchmark --verbose --suite fast "$@"
  echo "gfi bench fast: load after the run: $(uptime)" >&2
  for gp in plots/fast_*.gp; do
    gnuplot -e "dir='$GFI_BUILD/bench'" "$gp"
  done
  echo "gfi bench fast: tables and figures in $GFI_BUILD/bench (fast_*.dat, fast_*.png, fast_*.pdf)" >&2
  exit 0
fi

meson test -C "$GFI_BUILD" --benchmark --verbose "$@"
