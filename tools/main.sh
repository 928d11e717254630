#!/usr/bin/env bash
# Set up (packages, build) and run gfi's main job: the density demonstration,
# data and figures in ./results (or the directory given with --out DIR).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
out=results
if [ "${1:-}" = "--out" ] && [ -n "${2:-}" ]; then out=$2; shift 2; fi
echo "gfi main job: density demonstration -> $out/" >&2
"$GFI_BUILD/experiments/density_demo" --out "$out" "$@"
gnuplot -e "dir='$out'" plots/density_demo.gp
ls -1 "$out"/density_demo_* >&2
