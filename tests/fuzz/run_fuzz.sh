#!/usr/bin/env bash
# Run one libFuzzer harness for a bounded time from its seed corpus; any
# finding (a crash, a sanitizer report, a failed property, a leak, a timeout)
# fails the test and prints the input that caused it.
# Usage: run_fuzz.sh FUZZER SEED_DIR SECONDS [libFuzzer options...]
# (GFI_FUZZ_SECONDS, when set, replaces SECONDS.)
set -u
fuzzer=$1 seeds=$2 secs=${GFI_FUZZ_SECONDS:-$3}
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
"$fuzzer" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$work/" "$@" "$work/corpus" "$seeds" >"$work/log" 2>&1
rc=$?
tail -n 40 "$work/log"
for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
  [ -e "$a" ] || continue
  echo "finding $(basename "$a"), input (hex):"
  od -An -c "$a" | head -n 20
  rc=1
done
exit $rc
