#!/usr/bin/env bash
# The regression rate check in one command: set up and build, run
# 'gfi regress-rates' (table on stdout and in DIR/regress_rates_table.dat,
# per-size data in DIR/regress_rates.dat), then draw DIR/regress_rates.png/.pdf.
#   bash tools/regress_rates.sh [--out DIR] [any gfi regress-rates option, e.g. --size small]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
# gnuplot, failing on any warning it prints (an empty plot, a missing file)
gp() { local w; w=$(gnuplot "$@" 2>&1 >/dev/null) || { echo "$w" >&2; return 1; }
  if [ -n "$w" ]; then echo "$w" >&2; if grep -qi warning <<<"$w"; then echo "$0: gnuplot warned (above)" >&2; return 1; fi; fi; }
out=results
if [ "${1:-}" = "--out" ] && [ -n "${2:-}" ]; then out=$2; shift 2; fi
"$GFI_BUILD/cli/gfi" regress-rates --out "$out" "$@"
gp -e "dir='$out'" plots/regress_rates.gp
ls -1 "$out"/regress_rates* >&2
