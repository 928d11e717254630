#!/usr/bin/env bash
# The command line's inputs and outputs: .npy data and query files give the
# output of their text twins bit for bit (by suffix, by magic, on stdin);
# --out FILE.npy holds the printed values; --grid equals the same points in
# a query file; bad .npy files are named errors; --method/--tol reach the
# metadata; a full disk (/dev/full) is exit 1 for every subcommand.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

rows() { grep -v '^#' "$1"; }
# the float64 values of a .npy written by gfi (128-byte header), one per line
npyvals() { od -A n -t f8 -v -j 128 "$1" | tr -s ' ' '\n' | grep -v '^$'; }
# a version 1.0 .npy header for DICT, padded to 64 bytes
npyhdr() {
  local dict=$1 n=$((${#1} + 1))
  local hl=$((n + (64 - (10 + n) % 64) % 64))
  printf '\x93NUMPY\x01\x00'
  printf "\\x$(printf %02x $((hl % 256)))\\x$(printf %02x $((hl / 256)))"
  printf '%s%*s\n' "$dict" $((hl - n)) ''
}
# every number of two files equal as doubles
same_numbers() { paste <(tr -s ' ' '\n' <"$1" | grep -v '^$') <(tr -s ' ' '\n' <"$2" | grep -v '^$') |
  awk 'NF != 2 || $1 + 0 != $2 + 0 { bad = 1 } END { exit bad || NR == 0 }'; }

# --- data and queries: text and .npy give identical output
"$GFI" sample --model normal:cov=1,0.3,0.3,0.5 --dim 2 --n 300 --seed 3 >"$T/d.txt"
"$GFI" sample --model normal:cov=1,0.3,0.3,0.5 --dim 2 --n 300 --seed 3 --out "$T/d.npy" >"$T/d.meta" || bad "sample --out .npy"
grep -q "^# out: $T/d.npy: float64 array of shape (300, 2)" "$T/d.meta" && ok || bad "sample --out metadata: $(cat "$T/d.meta")"
[ "$(rows "$T/d.meta" | wc -l)" -eq 0 ] && ok || bad "with --out .npy no rows on stdout"
[ "$(stat -c %s "$T/d.npy")" -eq $((128 + 300 * 2 * 8)) ] && ok || bad "d.npy size $(stat -c %s "$T/d.npy")"
same_numbers <(rows "$T/d.txt") <(npyvals "$T/d.npy") && ok || bad "sample's .npy differs from its text"
"$GFI" sample --model normal --dim 2 --n 40 --seed 4 >"$T/q.txt"
"$GFI" sample --model normal --dim 2 --n 40 --seed 4 --out "$T/q.npy" >/dev/null
cp "$T/d.npy" "$T/d.bin" # no suffix: found by its magic
A="density --phi pow:4 --R 1.5,2.5"
"$GFI" $A --data "$T/d.txt" --at "$T/q.txt" >"$T/o.txt" || bad "density text ran"
for args in "--data $T/d.npy --at $T/q.txt" "--data $T/d.txt --at $T/q.npy" "--data $T/d.bin --at $T/q.npy" \
            "--data - --at $T/q.npy"; do
  "$GFI" $A $args <"$T/d.npy" >"$T/o.npy.txt" 2>"$T/err" || bad "density $args: $(cat "$T/err")"
  cmp -s <(rows "$T/o.txt") <(rows "$T/o.npy.txt") && ok || bad "density $args differs from text input"
done
# Gaussian kernel, weights from a .npy (N,)
"$GFI" sample --model uniform:1,2 --n 300 --seed 9 >"$T/w.txt"
"$GFI" sample --model uniform:1,2 --n 300 --seed 9 --out "$T/w.npy" >/dev/null
"$GFI" density --data "$T/d.txt" --weights "$T/w.txt" --kernel gauss --bandwidth scott --at "$T/q.txt" >"$T/g1"
"$GFI" density --data "$T/d.npy" --weights "$T/w.npy" --kernel gauss --bandwidth scott --at "$T/q.npy" >"$T/g2"
cmp -s <(rows "$T/g1") <(rows "$T/g2") && ok || bad "gauss density with .npy weights differs"
# regression: (N, D + 1) pairs
"$GFI" regress-sample --model normal --truth sin:2 --noise gauss:0.1 --dim 2 --n 200 --seed 5 >"$T/p.txt"
"$GFI" regress-sample --model normal --truth sin:2 --noise gauss:0.1 --dim 2 --n 200 --seed 5 --out "$T/p.npy" >/dev/null
"$GFI" regress --data "$T/p.txt" --dim 2 --R 2 --at "$T/q.txt" >"$T/r1" || bad "regress text ran"
"$GFI" regress --data "$T/p.npy" --dim 2 --R 2 --at "$T/q.npy" >"$T/r2" || bad "regress .npy ran"
cmp -s <(rows "$T/r1") <(rows "$T/r2") && ok || bad "regress .npy input differs from text"

# --- --out: .npy values, the whole table, a text file
"$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --out "$T/v.npy" >"$T/v.meta" || bad "density --out .npy"
grep -q "^# out: $T/v.npy: float64 array of shape (40,)" "$T/v.meta" && ok || bad "values metadata: $(grep out: "$T/v.meta")"
same_numbers <(rows "$T/o.txt" | awk '{print $3}') <(npyvals "$T/v.npy") && ok || bad "--out .npy values differ from the text"
"$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --out "$T/t.npy" --npy-table >"$T/t.meta"
grep -q "shape (40, 3)" "$T/t.meta" && ok || bad "--npy-table shape"
same_numbers <(rows "$T/o.txt") <(npyvals "$T/t.npy") && ok || bad "--npy-table differs from the text"
"$GFI" $A --data "$T/t.npy" --dim 3 --R 1 --at "$T/t.npy" --R 1 >/dev/null 2>"$T/err"
grep -q "given twice" "$T/err" && ok || bad "--R twice"
"$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --out "$T/o2.txt" >"$T/empty" || bad "--out text"
[ ! -s "$T/empty" ] && cmp -s <(grep -v '^# \(command\|--out\)' "$T/o.txt") <(grep -v '^# \(command\|--out\)' "$T/o2.txt") &&
  ok || bad "--out FILE differs from standard output"
"$GFI" regress --data "$T/p.txt" --dim 2 --R 2 --at "$T/q.txt" --out "$T/rv.npy" >"$T/rv.meta"
same_numbers <(rows "$T/r1" | awk '{print $3}') <(npyvals "$T/rv.npy") && ok || bad "regress --out .npy"
"$GFI" pdf --model normal --dim 2 --at "$T/q.npy" --out "$T/pdf.npy" >/dev/null || bad "pdf --out"
"$GFI" pdf --model normal --dim 2 --at "$T/q.txt" >"$T/pdf.txt"
same_numbers <(rows "$T/pdf.txt" | awk '{print $3}') <(npyvals "$T/pdf.npy") && ok || bad "pdf .npy in and out"

# --- --grid: the points of a query file, row-major, last axis fastest
for x in -1 0 1; do for y in 0 0.5 1; do echo "$x $y"; done; done >"$T/g.txt"
"$GFI" $A --data "$T/d.txt" --at "$T/g.txt" --method direct >"$T/ga" || bad "grid twin ran"
for grid in "--grid -1:1:3,0:1:3" "--grid -1:1:3 --grid 0:1:3"; do
  "$GFI" $A --data "$T/d.txt" $grid --method direct >"$T/gb" 2>"$T/err" || bad "$grid: $(cat "$T/err")"
  cmp -s <(rows "$T/ga") <(rows "$T/gb") && ok || bad "$grid differs from the same points in a file"
  grep -q '^# at: grid -1:1:3 x 0:1:3 (9 points' "$T/gb" && ok || bad "$grid metadata: $(grep '^# at' "$T/gb")"
done
"$GFI" $A --data "$T/d.txt" --grid 0.5:0.5:1 | rows /dev/stdin | awk 'NR == 1 && $1 == 0.5 && $2 == 0.5 {n++} END {exit !(NR == 1 && n)}' &&
  ok || bad "one spec for both axes, n = 1"
"$GFI" regress --data "$T/p.txt" --dim 2 --R 2 --grid -1:1:3,0:1:3 --method direct >"$T/rg" || bad "regress --grid"
"$GFI" regress --data "$T/p.txt" --dim 2 --R 2 --at "$T/g.txt" --method direct >"$T/rh"
cmp -s <(rows "$T/rg") <(rows "$T/rh") && ok || bad "regress --grid differs from the file"
expect 2 "\-\-grid: expected lo:hi:n, got '1:2'" -- "$GFI" $A --data "$T/d.txt" --grid 1:2
expect 2 "\-\-grid: expected 1 or D = 2 axis specs, got 3" -- "$GFI" $A --data "$T/d.txt" --grid 0:1:2,0:1:2,0:1:2
expect 2 "\-\-grid: n must be an integer >= 1" -- "$GFI" $A --data "$T/d.txt" --grid 0:1:-2
expect 2 "\-\-grid: must be at least 1" -- "$GFI" $A --data "$T/d.txt" --grid 0:1:0
expect 2 "\-\-grid: lo and hi must be finite" -- "$GFI" $A --data "$T/d.txt" --grid 0:inf:3
expect 2 "\-\-at: give either --at or --grid" -- "$GFI" $A --data "$T/d.txt" --grid 0:1:3 --at "$T/q.txt"
expect 2 "\-\-at: required" -- "$GFI" $A --data "$T/d.txt"

# --- bad .npy files: exit 1, the file and what is wrong
body() { tail -c +129 "$T/d.npy"; }
{ npyhdr "{'descr': '<f4', 'fortran_order': False, 'shape': (300, 2), }"; body; } >"$T/f4.npy"
{ npyhdr "{'descr': '<f8', 'fortran_order': True, 'shape': (300, 2), }"; body; } >"$T/fo.npy"
{ npyhdr "{'descr': '<f8', 'fortran_order': False, 'shape': (300, 2, 1), }"; body; } >"$T/s3.npy"
{ npyhdr "{'descr': '<f8', 'fortran_order': False, 'shape': (300, 2), }"; body | head -c 4000; } >"$T/short.npy"
{ npyhdr "{'descr': '<f8', 'fortran_order': False, 'shape': (100, 2), }"; body; } >"$T/long.npy"
{ npyhdr "{'descr': '<f8', 'fortran_order': False, 'shape': (300, 2), }"; body; } >"$T/good.npy"
{ npyhdr "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 2), }"; } >"$T/zero.npy"
{ printf '\x93NUMPY\x04\x00'; tail -c +9 "$T/d.npy"; } >"$T/v4.npy"
{ npyhdr "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }"; printf '\0\0\0\0\0\0\xf8\x7f'; head -c 24 /dev/zero; } >"$T/nan.npy"
cp "$T/d.txt" "$T/text.npy"
cmp -s <("$GFI" $A --data "$T/good.npy" --at "$T/q.txt" | rows /dev/stdin) <(rows "$T/o.txt") && ok || bad "handmade header"
expect 1 "data file $T/f4.npy: unsupported dtype '<f4'" -- "$GFI" $A --data "$T/f4.npy" --at "$T/q.txt"
expect 1 "data file $T/fo.npy: fortran_order True" -- "$GFI" $A --data "$T/fo.npy" --at "$T/q.txt"
expect 1 "data file $T/s3.npy: shape (300, 2, 1): expected (N,) or (N, D)" -- "$GFI" $A --data "$T/s3.npy" --at "$T/q.txt"
expect 1 "data file $T/short.npy: truncated data" -- "$GFI" $A --data "$T/short.npy" --at "$T/q.txt"
expect 1 "data file $T/long.npy: bytes after the 200 values" -- "$GFI" $A --data "$T/long.npy" --at "$T/q.txt"
expect 1 "data file $T/zero.npy: no data rows" -- "$GFI" $A --data "$T/zero.npy" --at "$T/q.txt"
expect 1 "data file $T/v4.npy: unsupported .npy version 4.0" -- "$GFI" $A --data "$T/v4.npy" --at "$T/q.txt"
expect 1 "data file $T/text.npy: bad magic" -- "$GFI" $A --data "$T/text.npy" --at "$T/q.txt"
expect 1 "data file $T/nan.npy: row 1, column 1: value is NaN" -- "$GFI" $A --data "$T/nan.npy" --at "$T/q.txt"
expect 1 "data file $T/d.npy: shape (300, 2): expected 3 columns" -- "$GFI" $A --dim 3 --data "$T/d.npy" --at "$T/q.txt"
expect 1 "query file $T/q.npy: shape (40, 2): expected 1 column" -- "$GFI" pdf --model normal --at "$T/q.npy"
expect 1 "query file $T/f4.npy: unsupported dtype" -- "$GFI" $A --data "$T/d.txt" --at "$T/f4.npy"
expect 1 "$T/missing.npy: No such file" -- "$GFI" $A --data "$T/missing.npy" --at "$T/q.txt"
expect 1 "\-\-out /nonexistent/v.npy: cannot write\|No such file" -- "$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --out /nonexistent/v.npy

# --- --method and --tol
"$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --method direct >"$T/m1" || bad "--method direct"
grep -q '^# method: direct (requested)$' "$T/m1" && ok || bad "method metadata: $(grep method "$T/m1")"
# the fast route: its report, and every value within its error bound of the direct sum
within_bound() { # direct, fast, value column
  local b; b=$(sed -n 's/^# method: fast[ ,].*error bound \([^ ]*\) .*/\1/p' "$2")
  [ -n "$b" ] && paste <(rows "$1") <(rows "$2") | awk -v b="$b" -v c="$3" -v n="$(rows "$1" | head -1 | wc -w)" '
    { d = $c - $(c + n); if (d < 0) d = -d; if (d > b) bad = 1 } END { exit bad || NR == 0 }'
}
for q in "--at $T/q.txt" "--grid -2:2:7,-1:1:5"; do
  "$GFI" $A --data "$T/d.txt" $q --method direct >"$T/m1"
  "$GFI" $A --data "$T/d.txt" $q --method fast --tol 1e-8 >"$T/m2" || bad "--method fast $q"
  grep -q '^# method: fast (requested), tol 1e-08; [0-9]* frequency nodes' "$T/m2" && ok || bad "fast metadata: $(grep method "$T/m2")"
  within_bound "$T/m1" "$T/m2" 3 && ok || bad "fast $q not within its bound of the direct sum"
done
"$GFI" regress --data "$T/p.txt" --dim 2 --R 2 --at "$T/q.txt" --method direct >"$T/m1"
"$GFI" regress --data "$T/p.txt" --dim 2 --R 2 --at "$T/q.txt" --method fast >"$T/m2" || bad "regress --method fast"
grep -q '^# method: fast (requested), tol 1e-10; [0-9]* frequency nodes' "$T/m2" && ok || bad "regress fast metadata: $(grep method "$T/m2")"
paste <(rows "$T/m1") <(rows "$T/m2") | awk '{ d = $3 - $6; if (d < 0) d = -d; if (d > 1e-8) bad = 1 } END { exit bad || NR == 0 }' &&
  ok || bad "regress fast differs from direct by more than 1e-8"
grep -q '^# method: direct (auto: the cost model)' <("$GFI" density --data "$T/d.txt" --kernel gauss --bandwidth 1 --at "$T/q.txt") &&
  ok || bad "gauss route metadata"
grep -q '^# --method: auto (default)' "$T/o.txt" && ok || bad "default method in the metadata"
expect 2 "\-\-method: unknown method 'quick'" -- "$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --method quick
expect 2 "\-\-tol: must be in (0, 1)" -- "$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --tol 1
expect 2 "\-\-tol: value must be > 0" -- "$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --tol 0
# the Gaussian baselines have a fast route too: same values, and the metadata says so
"$GFI" density --data "$T/d.txt" --kernel gauss --bandwidth 0.7 --at "$T/q.txt" --method fast > "$T/gf.txt" &&
  "$GFI" density --data "$T/d.txt" --kernel gauss --bandwidth 0.7 --at "$T/q.txt" --method direct > "$T/gd.txt" &&
  grep -q '^# method: fast (requested), tol 1e-10; [0-9]* frequency nodes' "$T/gf.txt" &&
  paste <(grep -v '^#' "$T/gf.txt") <(grep -v '^#' "$T/gd.txt") |
  awk '{n = NF / 2; d = $n - $NF; if (d < 0) d = -d; if (d > 1e-10) bad = 1} END {exit bad}' &&
  ok || bad "gauss density fast differs from direct or does not say so"
"$GFI" regress --data "$T/p.txt" --dim 2 --kernel gauss --bandwidth 0.8,0.6 --at "$T/q.txt" --method fast > "$T/rf.txt" &&
  "$GFI" regress --data "$T/p.txt" --dim 2 --kernel gauss --bandwidth 0.8,0.6 --at "$T/q.txt" --method direct > "$T/rd.txt" &&
  grep -q '^# method: fast (requested)' "$T/rf.txt" &&
  paste <(grep -v '^#' "$T/rf.txt") <(grep -v '^#' "$T/rd.txt") |
  awk '{n = NF / 2; d = $n - $NF; if (d < 0) d = -d; if (d > 1e-9) bad = 1} END {exit bad}' &&
  ok || bad "gauss regress fast differs from direct or does not say so"
expect 2 "\-\-method: fast needs --kernel fourier with phi = pow:L" -- "$GFI" regress --data "$T/p.txt" --dim 2 --phi abs --R 2 --at "$T/q.txt" --method fast
expect 2 "\-\-backend" -- "$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --method fast --backend cuda

# --- a full disk is an error for every subcommand
F="$T/full.err"
full() { "$@" >/dev/full 2>"$F"; local rc=$?
  [ "$rc" -eq 1 ] && grep -q "No space left on device" "$F" && ok || bad "'$*' >/dev/full exited $rc: $(cat "$F")"; }
full "$GFI" sample --model normal --n 10
full "$GFI" pdf --model normal --dim 2 --at "$T/q.txt"
full "$GFI" $A --data "$T/d.txt" --at "$T/q.txt"
full "$GFI" regress --data "$T/p.txt" --dim 2 --R 2 --at "$T/q.txt"
full "$GFI" regress-sample --model normal --truth sin --n 10
full "$GFI" regress-mse --model normal --truth sin --n 20 --reps 2 --R 2 --points 3
full "$GFI" mise --model normal --n 100 --R 2 --exact
full "$GFI" ropt --model normal --n 100
full "$GFI" flt-error --rpe gauss:s=1 --proposal gauss:tau=0.3 --L 8 --r 4 --trials 2
full "$GFI" flt-complexity --rpe gauss:s=1 --proposal gauss:tau=0.3 --L 8 --eps 0.5 --delta 0.5 --trials 2 --rmax 16
full "$GFI" sample --help
"$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --out /dev/full >/dev/null 2>"$F"
[ $? -eq 1 ] && grep -q "/dev/full" "$F" && ok || bad "--out /dev/full (text): $(cat "$F")"
ln -s /dev/full "$T/full.npy"
"$GFI" $A --data "$T/d.txt" --at "$T/q.txt" --out "$T/full.npy" >/dev/null 2>"$F"
[ $? -eq 1 ] && grep -q "No space left on device" "$F" && ok || bad "--out to a full disk (.npy): $(cat "$F")"

# A pipe given by name is read whole (its first byte tells text from .npy
# and is put back): the same density as from the file.
"$GFI" $A --data "$T/d.txt" --at "$T/q.txt" >"$T/file.out" 2>/dev/null
"$GFI" $A --data <(cat "$T/d.txt") --at <(cat "$T/q.txt") >"$T/pipe.out" 2>"$F"
[ $? -eq 0 ] && diff <(data "$T/file.out") <(data "$T/pipe.out") >/dev/null && ok ||
  bad "tables from pipes given by name: $(cat "$F")"

# a nan in mise's bias2/var columns is announced in the metadata
"$GFI" mise --model normal --n 200 --R 2 --mc 3 --seed 1 --no-parts >"$T/np.out" 2>"$F"
[ $? -eq 0 ] && grep -q '^# parts: bias2 and var not available (--no-parts)' "$T/np.out" &&
  [ "$(grep -v '^#' "$T/np.out" | awk '{print $5, $6}')" = "nan nan" ] && ok || bad "mise --no-parts: $(cat "$F" "$T/np.out")"
"$GFI" mise --model normal --n 200 --R 2 --mc 3 --seed 1 >"$T/p.out" 2>"$F"
[ $? -eq 0 ] && ! grep -q '^# parts:' "$T/p.out" && ! grep -v '^#' "$T/p.out" | grep -qi nan && ok ||
  bad "mise with parts: $(cat "$F" "$T/p.out")"

# ropt: the Gaussian baseline's nan for a non-mixture truth is announced
"$GFI" ropt --model cauchy --n 100 >"$T/ro.out" 2>"$F"
[ $? -eq 0 ] && grep -q '^# gauss: h_gauss and mise_gauss not available' "$T/ro.out" &&
  [ "$(grep -v '^#' "$T/ro.out" | awk '{print $6, $7}')" = "nan nan" ] && ok || bad "ropt cauchy: $(cat "$F" "$T/ro.out")"

# the fast route's warnings on stderr: a bound above the scale (the
# Gaussian's far tail, 1e-18 of the peak) and an explicit fast route the cost
# model puts far above the direct sum (one query, an outlier at 3e4: 1e5
# frequency nodes); the exit status stays 0
"$GFI" sample --model normal --n 300 --seed 5 >"$T/w1.txt"
echo 8 >"$T/w1q.txt"
"$GFI" density --data "$T/w1.txt" --kernel gauss --bandwidth 0.3 --at "$T/w1q.txt" --method fast >/dev/null 2>"$F" &&
  [ "$(grep -c "^gfi: warning: the fast route's error bound is .* relative to" "$F")" -eq 1 ] && ok ||
  bad "bound above 1: $(cat "$F")"
{ head -n 99 "$T/w1.txt"; echo 30000; } >"$T/w2.txt"
"$GFI" density --data "$T/w2.txt" --R 2 --at "$T/w1q.txt" --method fast >/dev/null 2>"$F" &&
  [ "$(grep -c "^gfi: warning: --method fast ran at an estimated .* times the direct sum's cost" "$F")" -eq 1 ] &&
  ok || bad "fast far above direct: $(cat "$F")"
"$GFI" density --data "$T/w1.txt" --R 2 --at "$T/w1q.txt" >/dev/null 2>"$F" && ! grep -q warning "$F" && ok ||
  bad "auto warns: $(cat "$F")"

finish "cli-io"
