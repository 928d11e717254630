#!/usr/bin/env bash
# No half-written output: every file gfi creates for --out (text and .npy)
# and --grad is written under a temporary name in its folder and renamed over
# the destination only when complete. A write that fails (a file-size limit:
# the writes fail with EFBIG, on any machine; a full tmpfs: ENOSPC, when
# running as root where mount works) must exit 1 naming the file, leave the
# destination as it was (absent, or its old content) and no temporary behind.
# Usage: atomic_output_test.sh path/to/gfi
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
case $GFI in /*) ;; *) GFI=$PWD/$GFI ;; esac
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
cd "$T" || exit 1
mkdir in
"$GFI" sample --model normal --n 300 --seed 1 --out in/d1.txt
"$GFI" regress-sample --model normal --truth sin --noise gauss:0.1 --n 300 --seed 1 --out in/r1.txt
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "%.6f\n", -3 + 6 * i / 9999 }' >in/q.txt
awk 'BEGIN { for (i = 0; i < 2000; i++) printf "%.3f %.3f %.3f %.3f\n", i / 2000, 1 - i / 2000, (i % 7) / 7, (i % 3) / 3 }' >in/qk.txt
python=/usr/bin/python3

# the commands, each writing about 60 KiB or more to OUT (appended)
cmds=(
  "sample --model normal --n 4000 --seed 1 --out"
  "pdf --model normal --at in/q.txt --out"
  "density --data in/d1.txt --R 2 --at in/q.txt --method direct --out"
  "regress --data in/r1.txt --R 2 --at in/q.txt --method direct --out"
  "regress-sample --model normal --truth sin --n 4000 --seed 1 --out"
  "attention --q in/qk.txt --k in/qk.txt --v in/qk.txt --heads 1 --R 1 --out"
)

# leftovers DIR: files other than the expected ones (temporaries)
leftovers() { find "$1" -name '.*gfi-*' | head -3; }

# under_limit KIND DIR: every command, text and .npy, with the write failing
check_failing_writes() {
  local how=$1 dir=$2 limit=$3
  for c in "${cmds[@]}"; do
    for ext in txt npy; do
      local out=$dir/o.$ext
      printf 'old content\n' >"$out"
      # shellcheck disable=SC2086
      ( trap '' XFSZ; [ -z "$limit" ] || ulimit -f "$limit"; exec "$GFI" $c "$out" ) >/dev/null 2>"$T/err"
      local rc=$?
      if [ "$rc" -ne 1 ]; then bad "$how: 'gfi $c $out' exited $rc, expected 1: $(cat "$T/err")"; continue; fi
      if ! grep -q "$out" "$T/err"; then bad "$how: 'gfi $c $out': the message does not name the file: $(cat "$T/err")"; continue; fi
      if [ "$(cat "$out")" != "old content" ]; then bad "$how: 'gfi $c $out' changed the destination"; continue; fi
      if [ -n "$(leftovers "$dir")" ]; then bad "$how: 'gfi $c $out' left $(leftovers "$dir")"; rm -f "$dir"/.*gfi-*; continue; fi
      rm -f "$out"
      ( trap '' XFSZ; [ -z "$limit" ] || ulimit -f "$limit"; exec "$GFI" $c "$out" ) >/dev/null 2>"$T/err"
      rc=$?
      if [ "$rc" -ne 1 ] || [ -e "$out" ] || [ -n "$(leftovers "$dir")" ]; then
        bad "$how: 'gfi $c $out' (new file) exited $rc, left $(ls -A "$dir" | tr '\n' ' ')"
        rm -f "$dir"/.*gfi-* "$out"
        continue
      fi
      ok
    done
  done
  # attention's gradients (text and .npy) and the batched layout
  printf 'old content\n' >"$dir/g.dQ"
  ( trap '' XFSZ; [ -z "$limit" ] || ulimit -f "$limit"
    exec "$GFI" attention --q in/qk.txt --k in/qk.txt --v in/qk.txt --R 1 --grad "$dir/g" --out /dev/null ) \
    >/dev/null 2>"$T/err"
  if [ $? -eq 1 ] && [ "$(cat "$dir/g.dQ")" = "old content" ] && [ -z "$(leftovers "$dir")" ]; then ok
  else bad "$how: attention --grad: $(cat "$T/err"), left $(ls -A "$dir" | tr '\n' ' ')"; fi
  rm -f "$dir"/g.* "$dir"/.*gfi-*
  if [ -s in/Q4.npy ]; then
    printf 'old content\n' >"$dir/H.npy"
    ( trap '' XFSZ; [ -z "$limit" ] || ulimit -f "$limit"
      exec "$GFI" attention --q in/Q4.npy --k in/Q4.npy --v in/Q4.npy --R 1 --out "$dir/H.npy" ) >/dev/null 2>"$T/err"
    if [ $? -eq 1 ] && [ "$(cat "$dir/H.npy")" = "old content" ] && [ -z "$(leftovers "$dir")" ]; then ok
    else bad "$how: batched attention --out: $(cat "$T/err"), left $(ls -A "$dir" | tr '\n' ' ')"; fi
    rm -f "$dir"/H.npy "$dir"/.*gfi-*
  fi
}

# a 4-D input for the batched layout (B, H, L, D) = (2, 2, 600, 4): 153 KiB out
if "$python" -c 'import numpy' 2>/dev/null; then
  "$python" -c 'import numpy as np; np.save("in/Q4.npy", np.random.default_rng(1).normal(size=(2, 2, 600, 4)))'
fi

# 1. A file-size limit of 16 KiB (bash counts ulimit -f in KiB): any machine.
mkdir lim
check_failing_writes "ulimit -f 16" lim 16

# 1b. The folders of the studies (rates --out DIR; the experiments layer's
#     writer, which reproduce, regress-rates, correlation and flt-study use
#     too): a failed write leaves every file of the folder as it was.
mkdir fold
"$GFI" rates --theorems 1 --model normal --nmax 1e4 --out fold >/dev/null
cp -r fold fold.before
( trap '' XFSZ; ulimit -f 1; exec "$GFI" rates --theorems 1 --model normal --nmax 1e4 --out fold ) >/dev/null 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "fold/rates_.*File too large" "$T/err" && diff -r fold fold.before >/dev/null &&
   [ -z "$(leftovers fold)" ]; then ok
else bad "rates --out fold under ulimit -f 1: exit $rc, $(cat "$T/err"), left $(ls -A fold | tr '\n' ' ')"; fi
rm -rf fold.before
"$GFI" rates --theorems 1 --model normal --nmax 1e4 --out fold >/dev/null
: >probe
if [ "$(ls -A fold | wc -l)" -eq 3 ] && [ -z "$(leftovers fold)" ] &&
   [ "$(stat -c %a fold/rates_table.dat)" = "$(stat -c %a probe)" ]; then ok
else bad "rates --out fold: $(ls -A fold | tr '\n' ' ')"; fi

# 2. A full tmpfs (the file system a user meets): root only, where mount works.
if [ "$(id -u)" -eq 0 ] && mkdir full && mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
  trap 'umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
  head -c 56000 /dev/zero >full/fill 2>/dev/null
  check_failing_writes "full tmpfs" full ""
  umount full
else
  echo "atomic-output: full-tmpfs cases skipped (they need root and a working 'mount -t tmpfs'); the file-size-limit cases ran"
fi

# 3. Success: the whole file, the usual permissions, no temporary; a device
#    (/dev/null) and a symbolic link are written, not replaced.
mkdir okd
umask 022
"$GFI" sample --model normal --n 4000 --seed 1 --out okd/a.txt >/dev/null
"$GFI" sample --model normal --n 4000 --seed 1 >okd/b.txt
if [ "$(grep -vc '^#' okd/a.txt)" -eq 4000 ] && [ "$(grep -v '^#' okd/a.txt)" = "$(grep -v '^#' okd/b.txt)" ]; then ok
else bad "sample --out okd/a.txt: not the rows of standard output"; fi
if [ "$(stat -c %a okd/a.txt)" = 644 ]; then ok; else bad "okd/a.txt has mode $(stat -c %a okd/a.txt), expected 644"; fi
chmod 600 okd/a.txt
"$GFI" sample --model normal --n 10 --seed 1 --out okd/a.txt >/dev/null
if [ "$(stat -c %a okd/a.txt)" = 600 ]; then ok; else bad "a replaced file lost its mode: $(stat -c %a okd/a.txt)"; fi
"$GFI" sample --model normal --n 10 --seed 1 --out okd/c.npy >/dev/null
if [ "$(head -c 6 okd/c.npy | tail -c 5)" = NUMPY ]; then ok; else bad "okd/c.npy is not a .npy file"; fi
ln -s a.txt okd/link.txt
"$GFI" sample --model normal --n 7 --seed 1 --out okd/link.txt >/dev/null
if [ -L okd/link.txt ] && [ "$(grep -vc '^#' okd/a.txt)" -eq 7 ]; then ok; else bad "--out through a symbolic link replaced the link"; fi
if "$GFI" sample --model normal --n 7 --seed 1 --out /dev/null >/dev/null && [ -c /dev/null ]; then ok
else bad "--out /dev/null failed or replaced the device"; fi
if [ -z "$(leftovers okd)" ]; then ok; else bad "temporaries left: $(leftovers okd)"; fi
expect 1 "^gfi sample: --out: cannot write okd: Is a directory" -- "$GFI" sample --model normal --n 7 --seed 1 --out okd
expect 1 "^gfi sample: --out: cannot write nodir/x.txt: No such file or directory (creating a temporary" -- "$GFI" sample --model normal --n 7 --seed 1 --out nodir/x.txt

# 4. --out '' is named as empty, for every command with --out FILE.
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086
  expect 2 "^gfi [a-z-]*: --out: the file name is empty" -- "$GFI" $c ''
done
expect 2 "^gfi attention: --grad: the file name is empty" -- \
  "$GFI" attention --q in/qk.txt --k in/qk.txt --v in/qk.txt --R 1 --grad '' --out /dev/null
expect 2 "^gfi sweep: --out: the file name is empty" -- "$GFI" sweep --model normal --ns 10 --Rs 1 --reps 2 --seed 1 --out ''
finish atomic-output
