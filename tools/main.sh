#!/usr/bin/env bash
# Set up (packages, build) and run gfi's main job: the reproduction of
# FourierFormer's synthetic Figures 1-2 with rate checks and the FLT study,
# data, figures and summary.md in ./results (or the directory given with
# --out DIR). Arguments are passed to 'gfi reproduce' (see its --help).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
echo "gfi main job: gfi reproduce $*" >&2
exec "$GFI_BUILD/cli/gfi" reproduce "$@"
