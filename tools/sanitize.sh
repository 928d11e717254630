#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer
# (leak checking on), built with clang into build-sanitize/, and the parsers'
# libFuzzer harnesses (tests/fuzz) run there for a bounded time. CUDA's
# compiler is off (nvcc output cannot be instrumented); the CPU emulator of
# the CUDA kernels is built, but only its quick tests run here (the full
# emulator tests run in the plain build; under the sanitizers they alone
# would take over ten minutes): GFI_SANITIZE_EMU=all runs them all. The
# slowest tests run smaller cases here (the same code paths; the plain build
# runs the full sizes): CHECK_SANITIZED in tests/check.h for the C tests,
# GFI_SANITIZE (set by meson from b_sanitize) for the scripts.
# Extra arguments go to 'meson test' (e.g. test names). Any finding fails.
# GFI_FUZZ_SECONDS (default 10) is each fuzzer's time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
gfi_install_packages "${GFI_SANITIZE_PACKAGES[@]}"
cd "$GFI_ROOT"
B=${GFI_SANITIZE_BUILD:-build-sanitize}
# an older configuration (gcc, without the fuzzers) is set up afresh
if [ -f "$B/build.ninja" ] && ! python3 -c 'import json, sys
sys.exit(not any(o["name"] == "fuzz" and o["value"] is True for o in json.load(open(sys.argv[1]))))' \
    "$B/meson-info/intro-buildoptions.json" 2>/dev/null; then
  rm -rf "$B"
fi
if [ ! -f "$B/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$B" -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debugoptimized -Dcuda=disabled -Dfuzz=true >&2
fi
ninja -C "$B" >&2
# malloc_context_size=2: each allocation keeps its allocating frame only (the
# error's own stack stays whole), so that tools/lsan_openmp.supp, which
# suppresses leaks whose recorded stack passes through libomp, matches
# libomp's own allocations and never a leak of gfi's inside a parallel region
# intercept_tls_get_addr=0: the sanitizer runtime of clang <= 16 takes a
# dynamic TLS block for glibc 2.19's layout whenever its address is 16 bytes
# past a page boundary (a malloc'd block can land there by chance) and reads
# a garbage range from it, which kills LeakSanitizer's tracer at exit
# ("Tracer caught signal 11") after a test has passed; the leak check of the
# heap, the stacks and static TLS is unchanged
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:malloc_context_size=2:intercept_tls_get_addr=0}
# the randomised bound test checks memory here, not the family's statistics
export GFI_GUARANTEE_CASES=${GFI_GUARANTEE_CASES:-3}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# libomp's own thread-team memory is not gfi's leak (tools/lsan_openmp.supp)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$GFI_ROOT/tools/lsan_openmp.supp:print_suppressions=0"
if [ $# -gt 0 ]; then
  exec meson test -C "$B" --print-errorlogs --timeout-multiplier 4 "$@"
fi
# Every test but the slow emulator ones; of those, the quick subset.
emu_quick='^(cuda-emu-self|cli-backend-emu-nodev)$'
mapfile -t tests < <(meson test -C "$B" --list 2>/dev/null | sed 's/^gfi:[a-z-]* *\/ *//; s/^gfi *\/ *//' |
  awk -v q="$emu_quick" -v all="${GFI_SANITIZE_EMU:-}" '!/emu/ || all == "all" || $0 ~ q')
meson test -C "$B" --print-errorlogs --timeout-multiplier 4 "${tests[@]}"
