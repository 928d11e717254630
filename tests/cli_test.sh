#!/usr/bin/env bash
# Command-line contract: outputs, agreement with an independent computation
# (awk), reproducibility, and every bad input reaching its message and exit code.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

# --- help and version
for c in sample pdf density; do
  expect 0 "" -- "$GFI" "$c" --help
  grep -q "usage: gfi $c" "$T/out" && ok || bad "$c --help text"
done
expect 0 "" -- "$GFI" --help
expect 0 "" -- "$GFI" --version
expect 2 "unknown command" -- "$GFI" frobnicate
expect 2 "missing command" -- "$GFI"

# --- sample: shape, metadata, reproducibility
"$GFI" sample --model normal:cov=1,0.5,0.5,2 --dim 2 --n 500 --seed 7 >"$T/s1" || bad "sample ran"
"$GFI" sample --model normal:cov=1,0.5,0.5,2 --dim 2 --n 500 --seed 7 >"$T/s2"
"$GFI" sample --model normal:cov=1,0.5,0.5,2 --dim 2 --n 500 --seed 8 >"$T/s3"
[ "$(grep -vc '^#' "$T/s1")" -eq 500 ] && ok || bad "sample row count"
[ "$(grep -v '^#' "$T/s1" | awk '{print NF}' | sort -u)" = 2 ] && ok || bad "sample columns"
[ "$(grep '^#' "$T/s1" | tail -1)" = "# x1 x2" ] && ok || bad "sample column line"
grep -q '^# seed: 7' "$T/s1" && ok || bad "sample records its seed"
diff <(grep -v '^#' "$T/s1") <(grep -v '^#' "$T/s2") >/dev/null && ok || bad "same seed, same points"
diff <(grep -v '^#' "$T/s1") <(grep -v '^#' "$T/s3") >/dev/null && bad "different seeds, same points" || ok
for m in normal mw:10 laplace cauchy t:3 uniform beta:2,5 "normal:mean=1;cov=2"; do
  expect 0 "" -- "$GFI" sample --model "$m" --n 10 --seed 1
done

# --- pdf: the standard normal at 0 and 1
printf '0\n1\n' >"$T/q1"
"$GFI" pdf --model normal --at "$T/q1" >"$T/p" || bad "pdf ran"
grep -v '^#' "$T/p" | awk 'NR==1 && ($2 - 0.3989422804014327)^2 < 1e-30 {a=1} NR==2 && ($2 - 0.24197072451914337)^2 < 1e-30 {b=1} END {exit !(a && b)}' && ok || bad "pdf values: $(cat "$T/p")"
[ "$(grep '^#' "$T/p" | tail -1)" = "# x1 pdf" ] && ok || bad "pdf column line"

# --- density against an independent awk computation (relative 1e-12)
"$GFI" sample --model normal:cov=1,0.3,0.3,0.5 --dim 2 --n 300 --seed 3 | grep -v '^#' >"$T/data2"
"$GFI" sample --model normal --dim 2 --n 40 --seed 4 | grep -v '^#' >"$T/q2"
head -3 "$T/data2" >>"$T/q2" # queries on data points (the series branch)
for l in 1 2 4 7; do
  "$GFI" density --data "$T/data2" --phi pow:$l --R 1.5,2.5 --at "$T/q2" >"$T/d" || bad "density l=$l ran"
  A=$(awk -v l=$l 'BEGIN{pi=atan2(0,-1); split("1 1 0.75 0.6666666666666666 0.5989583333333334 0.55 0.5110243055555556 0.4793650793650794",f," "); printf "%.17g", pi*f[l]}')
  grep -v '^#' "$T/d" | awk -v l=$l -v A="$A" -v data="$T/data2" '
    BEGIN { n = 0; while ((getline line < data) > 0) { split(line, v, " "); n++; k1[n] = v[1]; k2[n] = v[2] } }
    { s = 0; sa = 0
      for (i = 1; i <= n; i++) {
        u1 = 1.5 * ($1 - k1[i]); u2 = 2.5 * ($2 - k2[i])
        s1 = (u1 == 0) ? 1 : sin(u1) / u1; s2 = (u2 == 0) ? 1 : sin(u2) / u2
        t = (1.5 / A) * (2.5 / A) * (s1 ^ l) * (s2 ^ l) / n
        s += t; sa += (t < 0 ? -t : t)
      }
      e = ($3 - s); if (e < 0) e = -e
      if (e > 1e-12 * sa) { printf "row %d: gfi %.17g awk %.17g\n", NR, $3, s; bad = 1 }
    }
    END { exit bad }' && ok || bad "density l=$l differs from awk"
done
[ "$(grep '^#' "$T/d" | tail -1)" = "# x1 x2 density" ] && ok || bad "density column line"
[ "$(grep -vc '^#' "$T/d")" -eq 43 ] && ok || bad "density row count"

# Gaussian baseline against awk: diagonal bandwidth h = 0.4, 0.6
"$GFI" density --data "$T/data2" --kernel gauss --bandwidth 0.4,0.6 --at "$T/q2" | grep -v '^#' | awk -v data="$T/data2" '
  BEGIN { n = 0; pi = atan2(0, -1); while ((getline line < data) > 0) { split(line, v, " "); n++; k1[n] = v[1]; k2[n] = v[2] } }
  { s = 0
    for (i = 1; i <= n; i++) { a = ($1 - k1[i]) / 0.4; b = ($2 - k2[i]) / 0.6; s += exp(-(a*a + b*b) / 2) / (2 * pi * 0.4 * 0.6 * n) }
    e = ($3 - s); if (e < 0) e = -e
    if (e > 1e-12 * s) { printf "row %d: gfi %.17g awk %.17g\n", NR, $3, s; bad = 1 } }
  END { exit bad }' && ok || bad "gauss KDE differs from awk"
expect 0 "" -- "$GFI" density --data "$T/data2" --kernel gauss --bandwidth scott --at "$T/q2"
expect 0 "" -- "$GFI" density --data "$T/data2" --kernel gauss --bandwidth 0.2,0.05,0.05,0.3 --at "$T/q2"

# --model/--n/--seed equals --data from 'gfi sample' with the same seed; thread count changes nothing
"$GFI" sample --model mw:6 --n 2000 --seed 11 | grep -v '^#' >"$T/mw"
"$GFI" sample --model normal --n 50 --seed 12 | grep -v '^#' >"$T/q1b"
"$GFI" density --data "$T/mw" --phi pow:4 --R 2 --at "$T/q1b" --threads 1 | grep -v '^#' >"$T/a"
"$GFI" density --model mw:6 --n 2000 --seed 11 --phi pow:4 --R 2 --at "$T/q1b" --threads 2 | grep -v '^#' >"$T/b"
cmp -s "$T/a" "$T/b" && ok || bad "--model sampling or thread count changes the estimate"

# --- bad input: file errors (exit 1, file:line:column)
: >"$T/empty"
printf '# only a comment\n' >"$T/comment"
printf '1 2\n3 abc\n' >"$T/nonnum"
printf '1 2\n3 4\n5\n' >"$T/short"
printf '1 2\n3 nan\n' >"$T/nan"
printf '1 2\ninf 3\n' >"$T/inf"
D="density --phi pow:4 --R 1"
expect 1 "$T/missing" -- "$GFI" $D --data "$T/missing" --at "$T/q2"
expect 1 "$T/empty: no data rows" -- "$GFI" $D --data "$T/empty" --at "$T/q2"
expect 1 "$T/comment: no data rows" -- "$GFI" $D --data "$T/comment" --at "$T/q2"
expect 1 "$T/nonnum:2:2: not a number: 'abc'" -- "$GFI" $D --data "$T/nonnum" --at "$T/q2"
expect 1 "$T/short:3:2: expected 2 columns, found 1" -- "$GFI" $D --data "$T/short" --at "$T/q2"
expect 1 "$T/nan:2:2: value is NaN" -- "$GFI" $D --data "$T/nan" --at "$T/q2"
expect 1 "$T/inf:2:1: value is NaN or infinite" -- "$GFI" $D --data "$T/inf" --at "$T/q2"
expect 1 "query file $T/nonnum:2:2" -- "$GFI" $D --data "$T/data2" --at "$T/nonnum"
expect 1 "query file $T/short:1:2: too many columns: expected 1" -- "$GFI" $D --data "$T/mw" --at "$T/short"
expect 1 "$T/missing" -- "$GFI" pdf --model normal --at "$T/missing"
expect 1 "$T/nan:2:2" -- "$GFI" pdf --model normal --dim 2 --at "$T/nan"
# --- bad input: options (exit 2, the option named)
expect 2 "\-\-n: must be at least 1" -- "$GFI" sample --model normal --n 0 --seed 1
expect 2 "\-\-n: must be at least 1" -- "$GFI" density --model normal --n 0 --seed 1 --phi pow:4 --R 1 --at "$T/q1"
expect 2 "\-\-n: expected a non-negative integer" -- "$GFI" sample --model normal --n -5
expect 2 "\-\-R: radius must be > 0" -- "$GFI" density --phi pow:4 --data "$T/mw" --R 0 --at "$T/q1b"
# a repeated option is an error, not "the last one wins"
expect 2 "\-\-R: given twice" -- "$GFI" $D --data "$T/mw" --R 0 --at "$T/q1b"
expect 2 "\-\-seed: given twice" -- "$GFI" sample --model normal --n 3 --seed 1 --seed 2
expect 2 "\-\-n: missing value" -- "$GFI" sample --model normal --n
expect 2 "\-\-dat: unknown option" -- "$GFI" density --dat "$T/mw" --R 1 --at "$T/q1b"
expect 2 "\-\-progress: takes no value" -- "$GFI" sweep --progress=1
expect 2 "\-\-R: missing value" -- "$GFI" density --data "$T/mw" --at "$T/q1b" --R
# --NAME=VALUE is --NAME VALUE
cmp -s <("$GFI" density --data="$T/mw" --R=2 --at="$T/q1b" | grep -v '^# command') \
       <("$GFI" density --data "$T/mw" --R 2 --at "$T/q1b" | grep -v '^# command') && ok || bad "--NAME=VALUE"
# one table: --help lists exactly the options the metadata records, each once
for c in "sample --model normal --n 3" "pdf --model normal --at $T/q1" "density --data $T/mw --R 2 --at $T/q1b" \
         "regress-sample --model normal --truth sin --n 3"; do
  name=${c%% *}
  "$GFI" $name --help | grep -o '^  --[A-Za-z-]*' | sed 's/^  //' | grep -v '^--help$' >"$T/h"
  "$GFI" $c | sed -n 's/^# \(--[A-Za-z-]*\): .*/\1/p' >"$T/m"
  [ -s "$T/h" ] && cmp -s "$T/h" "$T/m" && ok || bad "$name: --help options $(tr '\n' ' ' <"$T/h") vs metadata $(tr '\n' ' ' <"$T/m")"
done
grep -q '^# --phi: pow:4 (default)$' <("$GFI" density --data "$T/mw" --R 2 --at "$T/q1b") && ok || bad "a default in the metadata"
expect 2 "\-\-R: radius must be > 0" -- "$GFI" density --data "$T/mw" --R -1 --at "$T/q1b"
expect 2 "\-\-R: entry 1 is not a number" -- "$GFI" density --data "$T/mw" --R abc --at "$T/q1b"
expect 2 "\-\-R: entry 2 must be finite" -- "$GFI" density --data "$T/data2" --R 1,nan --at "$T/q2"
expect 2 "\-\-R: expected 1 or D = 2 values, got 3" -- "$GFI" density --data "$T/data2" --R 1,2,3 --at "$T/q2"
expect 2 "\-\-R: required" -- "$GFI" density --data "$T/mw" --at "$T/q1b"
expect 2 "\-\-phi: power l must be in 1..8, got 9" -- "$GFI" density --data "$T/mw" --phi pow:9 --R 1 --at "$T/q1b"
expect 2 "\-\-phi: power l must be in 1..8, got 0" -- "$GFI" density --data "$T/mw" --phi pow:0 --R 1 --at "$T/q1b"
expect 2 "\-\-phi: unknown phi" -- "$GFI" density --data "$T/mw" --phi gauss --R 1 --at "$T/q1b"
# the flat-top kernel: the fast route agrees with the direct one; c outside (0, 1) is named
expect 0 "" -- "$GFI" density --data "$T/mw" --phi flattop:0.5 --R 3 --grid -3:3:13 --method direct
data "$T/out" >"$T/ftd"
expect 0 "" -- "$GFI" density --data "$T/mw" --phi flattop:0.5 --R 3 --grid -3:3:13 --method fast
data "$T/out" | paste "$T/ftd" - | awk '{ d = $2 - $4; if (d * d > 1e-18) b = 1; if ($2 < 0) neg = 1 } END { exit b || !neg }' &&
  ok || bad "flattop: fast and direct differ, or no negative value on the grid"
grep -q "^# kernel: fourier, phi flattop:0.5, A = 4.18879020478639" "$T/out" && ok || bad "flattop metadata: $(grep kernel: "$T/out")"
for c in 0 1 1.5 -0.2 nan; do
  expect 2 "\-\-phi: flattop: c must be in (0, 1)" -- "$GFI" density --data "$T/mw" --phi flattop:$c --R 1 --at "$T/q1b"
done
expect 2 "\-\-phi: flattop:c needs a number c in (0, 1), got 'x'" -- "$GFI" density --data "$T/mw" --phi flattop:x --R 1 --at "$T/q1b"
expect 2 "\-\-phi: 'flattop:0.5': the flat-top kernel serves density estimation only" -- "$GFI" regress --data "$T/mw" --phi flattop:0.5 --R 1 --at "$T/q1b"
expect 2 "\-\-phi: flattop: c must be in (0, 1)" -- "$GFI" mise --model normal --n 100 --phi flattop:2 --R 1 --exact
expect 2 "\-\-model: unknown model 'foo'" -- "$GFI" sample --model foo --n 3
expect 2 "\-\-model" -- "$GFI" density --model foo --n 3 --seed 1 --R 1 --at "$T/q1"
expect 2 "\-\-model" -- "$GFI" sample --model normal:cov=1,2 --dim 2 --n 3
expect 2 "\-\-model" -- "$GFI" sample --model normal:cov=1,2,2,1 --dim 2 --n 3
expect 2 "\-\-model" -- "$GFI" sample --model mw:16 --n 3
expect 2 "\-\-model" -- "$GFI" sample --model t:-1 --n 3
expect 2 "\-\-at: required" -- "$GFI" density --data "$T/mw" --R 1
expect 2 "\-\-bogus: unknown option" -- "$GFI" density --bogus
expect 2 "\-\-data: give either" -- "$GFI" density --data "$T/mw" --model normal --n 3 --seed 1 --R 1 --at "$T/q1"
expect 2 "\-\-seed: required with --model" -- "$GFI" density --model normal --n 3 --R 1 --at "$T/q1"
expect 2 "\-\-bandwidth: required" -- "$GFI" density --data "$T/mw" --kernel gauss --at "$T/q1b"
expect 2 "\-\-bandwidth" -- "$GFI" density --data "$T/data2" --kernel gauss --bandwidth 1,2,2,1 --at "$T/q2"
expect 2 "\-\-kernel: unknown kernel" -- "$GFI" density --data "$T/mw" --kernel epan --R 1 --at "$T/q1b"
expect 2 "\-\-dim: must be at least 1" -- "$GFI" sample --model normal --dim 0 --n 3
expect 2 "\-\-seed" -- "$GFI" sample --model normal --n 3 --seed x
expect 2 "unexpected argument" -- "$GFI" sample --model normal --n 3 extra

finish "cli"
