#!/usr/bin/env bash
# Set up (packages, build) and run gfi's test suite. Extra arguments go to
# 'meson test' (e.g. a test name).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
meson test -C "$GFI_BUILD" --print-errorlogs "$@"
