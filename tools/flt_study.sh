#!/usr/bin/env bash
# FLT study: every FLT table (.dat + flt_summary.md), the independent numpy
# check and the figures, into one directory.
#   bash tools/flt_study.sh [--quick] [--out DIR] [--seed S]
# --quick runs in seconds (smaller L, r, trials). Without it, the full study
# takes a few minutes on a small machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
# gnuplot, failing on any warning it prints (an empty plot, a missing file)
gp() { local w; w=$(gnuplot "$@" 2>&1 >/dev/null) || { echo "$w" >&2; return 1; }
  if [ -n "$w" ]; then echo "$w" >&2; if grep -qi warning <<<"$w"; then echo "$0: gnuplot warned (above)" >&2; return 1; fi; fi; }
out=results/flt
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --quick) args+=(--quick); shift ;;
    --seed) args+=(--seed "$2"); shift 2 ;;
    *) echo "flt_study.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
"$GFI_BUILD/experiments/flt_study" --out "$out" "${args[@]}"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 tools/flt_check.py "$out"
else
  echo "flt_study.sh: /usr/bin/python3 with numpy not found: independent check skipped (apt-get install python3-numpy)" >&2
fi
gp -e "dir='$out'" plots/flt_study.gp
ls -1 "$out"/flt_* >&2
