#!/usr/bin/env bash
# The regression rate check in one command: set up and build, run
# 'gfi regress-rates' (table on stdout and in DIR/regress_rates_table.dat,
# per-size data in DIR/regress_rates.dat), then draw DIR/regress_rates.png/.pdf.
#   bash tools/regress_rates.sh [--out DIR] [any gfi regress-rates option, e.g. --size small]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
out=results
if [ "${1:-}" = "--out" ] && [ -n "${2:-}" ]; then out=$2; shift 2; fi
"$GFI_BUILD/cli/gfi" regress-rates --out "$out" "$@"
gnuplot -e "dir='$out'" plots/regress_rates.gp
ls -1 "$out"/regress_rates* >&2
