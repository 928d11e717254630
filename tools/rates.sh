#!/usr/bin/env bash
# Rate checks with figures, in one command: the table for Theorems 1, 3a and 3b
# (gfi rates), MISE against R at fixed N (exact curves and Monte-Carlo points),
# and their figures, in ./results/rates (or --out DIR). Other arguments go to
# gfi rates (e.g. --size full, --dim 2).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
out=results/rates
if [ "${1:-}" = "--out" ] && [ -n "${2:-}" ]; then out=$2; shift 2; fi
mkdir -p "$out"
"$GFI_BUILD/cli/gfi" rates --out "$out" "$@" | tee "$out/rates_stdout.txt"
"$GFI_BUILD/experiments/mise_curves" --out "$out"
gnuplot -e "dir='$out'" plots/mise_rates.gp
gnuplot -e "dir='$out'" plots/mise_vs_R.gp
ls -1 "$out"/*.png "$out"/*.pdf >&2
