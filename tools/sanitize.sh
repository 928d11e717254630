#!/usr/bin/env bash
# The CUDA kernels under AddressSanitizer and UndefinedBehaviorSanitizer, on
# the CPU emulator: device memory is host memory there, so an out-of-bounds
# access by any kernel, a leak or undefined behaviour in libgfi_cuda's host
# code stops the test. Builds build-sanitize/ (CUDA compiler off: nvcc output
# cannot be instrumented) and runs the emulator's tests. Takes ~10 minutes on
# 2 cores. Extra arguments go to 'meson test'.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$GFI_ROOT"
B=build-sanitize
if [ ! -f "$B/build.ninja" ]; then
  meson setup "$B" -Db_sanitize=address,undefined -Dbuildtype=debugoptimized -Dcuda=disabled
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
meson test -C "$B" --print-errorlogs --timeout-multiplier 4 \
  cuda-emu-self cuda-emu cuda-mise-emu cli-backend-emu cli-backend-emu-nodev mise-backend-emu \
  bench-cuda-emu "$@"
