#!/usr/bin/env bash
# Set up (packages, build) and run gfi's benchmarks: they print pair rates and
# ratios against peers measured in the same run (scipy, numpy and statsmodels from
# Debian's python3-scipy, python3-numpy and python3-statsmodels, run with
# /usr/bin/python3). Extra arguments go to
# 'meson test --benchmark' (e.g. a benchmark name). For a short run use
#   build/bench/bench_density --quick
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"

# The scipy peer: installed when root, otherwise the benchmark skips it and
# says so; here we print how to get it.
GFI_BENCH_PACKAGES=(python3-scipy python3-numpy python3-statsmodels)
mapfile -t gfi_bench_missing < <(gfi_missing_packages "${GFI_BENCH_PACKAGES[@]}")
if ((${#gfi_bench_missing[@]} > 0)); then
  if [ "$(id -u)" = 0 ]; then
    gfi_install_packages "${gfi_bench_missing[@]}"
  else
    echo "gfi bench: the scipy and statsmodels peers need Debian packages; they are skipped without them. Run:" >&2
    echo "  sudo apt-get install ${gfi_bench_missing[*]}" >&2
  fi
fi

meson test -C "$GFI_BUILD" --benchmark --verbose "$@"
