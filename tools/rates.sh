#!/usr/bin/env bash
# Rate checks with figures, in one command: the table for Theorems 1, 3a and 3b
# (gfi rates), MISE against R at fixed N (exact curves and Monte-Carlo points),
# and their figures, in ./results/rates (or --out DIR). Other arguments go to
# gfi rates (e.g. --size full, --dim 2).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
# gnuplot, failing on any warning it prints (an empty plot, a missing file)
gp() { local w; w=$(gnuplot "$@" 2>&1 >/dev/null) || { echo "$w" >&2; return 1; }
  if [ -n "$w" ]; then echo "$w" >&2; if grep -qi warning <<<"$w"; then echo "$0: gnuplot warned (above)" >&2; return 1; fi; fi; }
out=results/rates
if [ "${1:-}" = "--out" ] && [ -n "${2:-}" ]; then out=$2; shift 2; fi
mkdir -p "$out"
"$GFI_BUILD/cli/gfi" rates --out "$out" "$@" | tee "$out/rates_stdout.txt"
"$GFI_BUILD/experiments/mise_curves" --out "$out"
gp -e "dir='$out'" plots/mise_rates.gp
gp -e "dir='$out'" plots/mise_vs_R.gp
ls -1 "$out"/*.png "$out"/*.pdf >&2
