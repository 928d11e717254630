#!/usr/bin/env bash
# --backend on 'gfi density', 'gfi regress' and 'gfi flt-error': cpu and auto agree (bit for
# bit without a GPU; to 1e-12 relative with one), cuda reaches the GPU or the
# right message and exit code (2 without libgfi_cuda, 1 without a GPU), bad
# values are usage errors. GFI_TEST_EXPECT=gpu|nodev|nocuda (optional) names
# the branch the run must take, so that a build that silently falls back
# cannot pass as the other.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

seq -3 0.25 3 >"$T/q1"
"$GFI" regress-sample --model normal --truth 'poly:0,1,-0.5' --noise gauss:0.3 --dim 1 --n 3000 --seed 2 >"$T/pairs"

for cmd in "density --model mw:6 --n 5000 --seed 1 --phi pow:4 --R 3 --at $T/q1" \
           "regress --data $T/pairs --dim 1 --phi pow:4 --R 2 --at $T/q1" \
           "density --model mw:6 --n 5000 --seed 1 --phi poly:0,1,0,0.5 --R 3 --at $T/q1" \
           "regress --data $T/pairs --dim 1 --phi poly:0,1,0,0.5 --R 2 --at $T/q1" \
           "flt-error --rpe gauss:s=1 --proposal gauss:tau=0.3 --L 48 --r 16,64,200 --trials 6 --seed 4"; do
  name=${cmd%% *}
  rc=$(run $GFI $cmd --backend cpu); cp "$T/out" "$T/cpu"
  [ "$rc" = 0 ] && grep -q '^# backend: cpu' "$T/cpu" && ok || bad "$name --backend cpu ($rc)"
  rc=$(run $GFI $cmd --backend auto); cp "$T/out" "$T/auto"
  [ "$rc" = 0 ] && ok || bad "$name --backend auto exited $rc: $(cat "$T/err")"
  rc=$(run $GFI $cmd --backend cuda); cp "$T/out" "$T/cuda"
  if grep -q '^# backend: cuda' "$T/auto"; then branch=gpu
  elif grep -q 'built without CUDA' "$T/err"; then branch=nocuda
  else branch=nodev; fi
  [ -z "$EXPECT" ] || [ "$EXPECT" = "$branch" ] && ok || bad "$name: expected the $EXPECT branch, got $branch"
  if [ "$branch" = gpu ]; then
    # a GPU is present: both GPU runs agree with the CPU to 1e-12 relative
    [ "$rc" = 0 ] && ok || bad "$name --backend cuda exited $rc with a GPU"
    for f in auto cuda; do
      paste <(data "$T/cpu") <(data "$T/$f") | awk -v n="$name $f" '
        { for (c = 1; c <= NF / 2; c++) { a = $c; b = $(c + NF / 2); d = a - b; if (d < 0) d = -d;
            m = a < 0 ? -a : a; if (d > 1e-12 * m + 1e-300) { print "FAIL: " n " column " c ": " a " vs " b; bad = 1 } } }
        END { exit bad }' >&2 && ok || bad "$name $f differs from cpu"
    done
  else
    cmp -s <(data "$T/cpu") <(data "$T/auto") && ok || bad "$name: auto without a GPU differs from cpu"
    if [ "$branch" = nocuda ]; then
      [ "$rc" = 2 ] && ok || bad "$name --backend cuda without libgfi_cuda exited $rc"
    else
      [ "$rc" = 1 ] && grep -q 'no usable GPU device' "$T/err" && [ "$(wc -l <"$T/err")" = 1 ] && ok ||
        bad "$name --backend cuda without a GPU: rc $rc, $(cat "$T/err")"
    fi
  fi
  rc=$(run $GFI $cmd --backend gpu)
  [ "$rc" = 2 ] && grep -q -- "--backend: unknown backend 'gpu'" "$T/err" && ok || bad "$name --backend gpu: $rc"
done
# a request the GPU engine does not cover
rc=$(run "$GFI" density --model mw:6 --n 100 --seed 1 --kernel gauss --bandwidth 0.3 --at "$T/q1" --backend cuda)
[ "$rc" = 2 ] && ok || bad "density --kernel gauss --backend cuda exited $rc"
rc=$(run "$GFI" density --model mw:6 --n 100 --seed 1 --kernel gauss --bandwidth 0.3 --at "$T/q1" --backend auto)
[ "$rc" = 0 ] && grep -q '^# backend: cpu' "$T/out" && ok || bad "gauss with auto falls back to cpu ($rc)"
"$GFI" density --help | grep -q -- '--backend' && ok || bad "density --help lacks --backend"
"$GFI" regress --help | grep -q -- '--backend' && ok || bad "regress --help lacks --backend"
"$GFI" flt-error --help | grep -q -- '--backend' && ok || bad "flt-error --help lacks --backend"

finish "cli-backend"
