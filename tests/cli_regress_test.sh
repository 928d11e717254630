#!/usr/bin/env bash
# Command-line contract of 'gfi regress' and 'gfi regress-sample': outputs,
# agreement with an independent awk computation (1e-12 of the error scale
# sum_i |K_i| |y_i| / |S| + |f| sum_i |K_i| / |S|), flagged rows, reproducibility,
# and every bad input reaching its message and exit code.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

for c in regress regress-sample regress-rates regress-mse; do
  expect 0 "" -- "$GFI" "$c" --help
  grep -q "usage: gfi $c" "$T/out" && ok || bad "$c --help text"
done

# --- regress-sample: shape, metadata, reproducibility
"$GFI" regress-sample --model normal:cov=1,0.5,0.5,1 --truth poly:0,1,-0.5,0.2 --noise gauss:0.3 \
  --dim 2 --n 400 --seed 5 >"$T/s1" || bad "regress-sample ran"
"$GFI" regress-sample --model normal:cov=1,0.5,0.5,1 --truth poly:0,1,-0.5,0.2 --noise gauss:0.3 \
  --dim 2 --n 400 --seed 5 >"$T/s2"
[ "$(grep -vc '^#' "$T/s1")" -eq 400 ] && ok || bad "regress-sample row count"
[ "$(grep '^#' "$T/s1" | tail -1)" = "# x1 x2 y" ] && ok || bad "regress-sample column line"
cmp -s "$T/s1" "$T/s2" && ok || bad "regress-sample not reproducible"
# noise-free cubic: y is exactly the polynomial of x1
"$GFI" regress-sample --model normal --truth poly:1,2,-0.5,0.25 --dim 2 --n 50 --seed 2 | grep -v '^#' |
  awk '{ f = 1 + 2*$1 - 0.5*$1^2 + 0.25*$1^3; e = $3 - f; if (e < 0) e = -e; if (e > 1e-12 * (1 + (f < 0 ? -f : f))) b = 1 } END { exit b }' \
  && ok || bad "regress-sample truth values"
for f in "polysum:0,1,0,1" sin "sin:2" prod-sin "poly:1,2;axis=2"; do
  expect 0 "" -- "$GFI" regress-sample --model normal --truth "$f" --noise hetero:0.1,0.5 --dim 2 --n 10 --seed 1
done

# --- regress against awk: D = 2, V = 2 responses, every kind of l
grep -v '^#' "$T/s1" | awk '{ print $1, $2, $3, sin($1) * $2 }' >"$T/data"
"$GFI" sample --model normal --dim 2 --n 40 --seed 4 | grep -v '^#' >"$T/q"
head -2 "$T/data" | awk '{print $1, $2}' >>"$T/q" # queries on data points (series branch)
echo "9 -7" >>"$T/q"                                # far from the data
check_awk() { # $1 = gfi output, $2 = awk expression of the weight from s1, s2 (sincs)
  grep -v '^#' "$1" | awk -v data="$T/data" -v tol=1e-8 "
    BEGIN { n = 0; while ((getline line < data) > 0) { split(line, v, \" \"); n++; k1[n] = v[1]; k2[n] = v[2]; y1[n] = v[3]; y2[n] = v[4] } }
    { S = 0; A = 0; n1 = 0; n2 = 0; a1 = 0; a2 = 0
      for (i = 1; i <= n; i++) {
        u1 = $R1 * (\$1 - k1[i]); u2 = $R2 * (\$2 - k2[i])
        s1 = (u1 == 0) ? 1 : sin(u1) / u1; s2 = (u2 == 0) ? 1 : sin(u2) / u2
        t = $2
        S += t; at = (t < 0 ? -t : t); A += at
        n1 += t * y1[i]; n2 += t * y2[i]; a1 += at * (y1[i] < 0 ? -y1[i] : y1[i]); a2 += at * (y2[i] < 0 ? -y2[i] : y2[i])
      }
      flagged = (A == 0 || S <= tol * A)
      if (flagged) { if (\$3 != \"nan\" || \$4 != \"nan\") { printf \"row %d: awk flags it, gfi %s\n\", NR, \$3; b = 1 }; next }
      if (\$3 == \"nan\") { printf \"row %d: gfi flags it, awk S/A = %g\n\", NR, S / A; b = 1; next }
      f1 = n1 / S; f2 = n2 / S; aS = (S < 0 ? -S : S)
      e1 = \$3 - f1; if (e1 < 0) e1 = -e1; e2 = \$4 - f2; if (e2 < 0) e2 = -e2
      sc1 = (a1 + (f1 < 0 ? -f1 : f1) * A) / aS; sc2 = (a2 + (f2 < 0 ? -f2 : f2) * A) / aS
      if (e1 > 1e-12 * sc1 || e2 > 1e-12 * sc2) { printf \"row %d: gfi %.17g %.17g awk %.17g %.17g\n\", NR, \$3, \$4, f1, f2; b = 1 }
    }
    END { exit b }"
}
R1=1.5 R2=2.5
for l in 1 2 3 4 7 8; do
  "$GFI" regress --data "$T/data" --dim 2 --phi pow:$l --R 1.5,2.5 --at "$T/q" >"$T/r" || bad "regress l=$l ran"
  check_awk "$T/r" "(s1 * s2) ^ $l" && ok || bad "regress l=$l differs from awk"
done
[ "$(grep '^#' "$T/r" | tail -1)" = "# x1 x2 y1 y2" ] && ok || bad "regress column line"
[ "$(grep -vc '^#' "$T/r")" -eq 43 ] && ok || bad "regress row count"
"$GFI" regress --data "$T/data" --dim 2 --phi relu --R 1.5,2.5 --at "$T/q" >"$T/r" || bad "relu ran"
check_awk "$T/r" "(s1 > 0 ? s1 : 0) * (s2 > 0 ? s2 : 0)" && ok || bad "regress relu differs from awk"
"$GFI" regress --data "$T/data" --dim 2 --phi abs --R 1.5,2.5 --at "$T/q" >"$T/r" || bad "abs ran"
check_awk "$T/r" "(s1 < 0 ? -s1 : s1) * (s2 < 0 ? -s2 : s2)" && ok || bad "regress abs differs from awk"
# Gaussian baseline, diagonal bandwidth 0.4, 0.6
"$GFI" regress --data "$T/data" --dim 2 --kernel gauss --bandwidth 0.4,0.6 --at "$T/q" >"$T/r" || bad "gauss ran"
# the far query (9, -7) underflows a naive Gaussian sum: check the rows before it
head -n -1 "$T/r" >"$T/r2"
R1=1 R2=1 check_awk "$T/r2" "exp(-(((\$1 - k1[i]) / 0.4)^2 + ((\$2 - k2[i]) / 0.6)^2) / 2)" && ok || bad "gauss NW differs from awk"
tail -1 "$T/r" | awk '$3 != "nan" && $3 == $3 + 0 {exit 0} {exit 1}' && ok || bad "gauss far query: $(tail -1 "$T/r")"
expect 0 "" -- "$GFI" regress --data "$T/data" --dim 2 --kernel gauss --bandwidth scott --at "$T/q"
expect 0 "" -- "$GFI" regress --data "$T/data" --dim 2 --kernel gauss --bandwidth 0.2,0.05,0.05,0.3 --at "$T/q"

# --- flagged rows: l = 1, one point at 0, sinc(4) < 0 at the query 4
printf '0 3\n' >"$T/one"
printf '0.5\n4\n' >"$T/q1"
"$GFI" regress --data "$T/one" --phi pow:1 --R 1 --at "$T/q1" >"$T/r" 2>"$T/err"
[ $? -eq 0 ] && [ ! -s "$T/err" ] && ok || bad "flagged rows: exit status or stderr"
grep -q '^# flagged: 1 (empty 0, negative 1, small 0)' "$T/r" && ok || bad "flag count: $(grep flagged "$T/r")"
[ "$(grep -v '^#' "$T/r" | awk '{print $2}' | tr '\n' ' ')" = "3 nan " ] && ok || bad "flagged row values"
"$GFI" regress --data "$T/one" --phi relu --R 1 --at "$T/q1" | grep -q '^# flagged: 1 (empty 1' && ok || bad "relu empty row"

# --- --model equals --data from regress-sample; thread count changes nothing; D inferred
"$GFI" regress-sample --model normal --truth sin:2 --noise gauss:0.2 --n 3000 --seed 9 | grep -v '^#' >"$T/d1"
seq -1.5 0.25 1.5 >"$T/g1"
"$GFI" regress --data "$T/d1" --phi pow:6 --R 3 --at "$T/g1" --threads 1 | grep -v '^#' >"$T/a"
"$GFI" regress --model normal --truth sin:2 --noise gauss:0.2 --n 3000 --seed 9 --phi pow:6 --R 3 --at "$T/g1" --threads 2 | grep -v '^#' >"$T/b"
cmp -s "$T/a" "$T/b" && ok || bad "--model sampling, D inference or thread count changes the estimate"
awk '{ e = $2 - sin(2 * $1); if (e < 0) e = -e; if (e > 0.15) b = 1 } END { exit b }' "$T/a" && ok || bad "regression far from sin(2x): $(cat "$T/a")"

# --- regress-rates: a tiny run writes the table (17 columns, a verdict) and its data
expect 0 "" -- "$GFI" regress-rates --size small --rows thm2-1d,thm4-1d --reps 6 --points 30 --out "$T/rates"
[ "$(grep -vc '^#' "$T/out")" -eq 2 ] && ok || bad "regress-rates rows: $(cat "$T/out")"
grep -v '^#' "$T/out" | awk 'NF != 17 || $17 !~ /^(consistent|faster-than-claimed|slower-than-claimed)$/ {b = 1} END {exit b}' && ok || bad "regress-rates columns"
cmp -s <(grep -v '^#' "$T/out") <(grep -v '^#' "$T/rates/regress_rates_table.dat") && ok || bad "table file differs"
[ "$(grep -v '^#' "$T/rates/regress_rates.dat" | awk 'NF == 9' | wc -l)" -eq 10 ] && ok || bad "per-size data"
"$GFI" regress-rates --size small --rows thm2-1d --reps 6 --points 30 --threads 1 | grep -v '^#' >"$T/r1"
"$GFI" regress-rates --size small --rows thm2-1d --reps 6 --points 30 --threads 2 | grep -v '^#' >"$T/r2"
cmp -s "$T/r1" "$T/r2" && ok || bad "regress-rates depends on the thread count"
expect 2 "\-\-size: expected small, medium or large" -- "$GFI" regress-rates --size huge
expect 2 "\-\-rows: unknown row 'thm9'" -- "$GFI" regress-rates --rows thm2-1d,thm9
expect 2 "\-\-reps: must be at least 3" -- "$GFI" regress-rates --reps 1
# --- concentration (Lemma 1): the table, its files, and bad input
expect 0 "" -- "$GFI" concentration --reps 400 --n 100 --at 0,1 --out "$T/l1"
[ "$(grep -vc '^#' "$T/out")" -eq 8 ] && ok || bad "concentration rows: $(cat "$T/out")"
awk '!/^#/ { if ($5 > $2 + 3 * sqrt($2 / 400)) b = 1 } END { exit b }' "$T/out" && ok || bad "frequency above delta: $(cat "$T/out")"
[ "$(grep -v '^#' "$T/l1/lemma1.dat" | awk 'NF == 6' | wc -l)" -eq 162 ] && ok || bad "lemma1.dat rows"
expect 2 "\-\-at: expected 1 to 8 points" -- "$GFI" concentration --at 1,2,3,4,5,6,7,8,9
expect 2 "\-\-model" -- "$GFI" concentration --model nonsense
expect 2 "\-\-l: expected 1..8" -- "$GFI" concentration --l 9
# --- regress-rates, Theorem 2 pointwise: one row per fixed point, the '# gamma' line and regress_points.dat
expect 0 "" -- "$GFI" regress-rates --size small --rows thm2-1d-pt --reps 6 --out "$T/pt"
[ "$(grep -v '^#' "$T/out" | awk '$1 ~ /^thm2-1d-pt@[012]$/ && NF == 17' | wc -l)" -eq 3 ] && ok || bad "pointwise rows: $(cat "$T/out")"
grep -q '^# gamma thm2-1d-pt: C(x) ~ p(x)^-gamma over 3 points, gamma = ' "$T/out" && ok || bad "gamma line"
awk '!/^#/ && NF { n++; if (NF != 12 || !($3 > 0) || !($9 > 0)) b = 1 } END { exit b || n != 3 }' "$T/pt/regress_points.dat" &&
  ok || bad "regress_points.dat: $(cat "$T/pt/regress_points.dat")"
expect 0 "" -- "$GFI" regress-rates --size small --reps 4 --points 20 --define 'mine:thm=gauss;dim=2;at=0,0/1,1'
[ "$(grep -v '^#' "$T/out" | awk '{print $1, $17}' | tr '\n' ' ')" = "mine@0,0 baseline mine@1,1 baseline " ] && ok ||
  bad "defined rows: $(cat "$T/out")"
expect 2 "\-\-define: row x: at=0,1: expected points" -- "$GFI" regress-rates --define 'x:thm=2;at=0,1'
expect 2 "\-\-define: x: Theorem 4 needs a supersmooth design" -- "$GFI" regress-rates --define 'x:thm=4;design=laplace'
expect 2 "\-\-define: row x: unknown key 'foo'" -- "$GFI" regress-rates --define 'x:thm=2;foo=1'

# --- regress-mse: a flat Gaussian NW on a constant truth is the mean of the responses:
# MSE sigma^2 / N = 0.005 at every point (4 standard errors); threads change nothing
printf '0\n1.5\n' >"$T/p2"
M="regress-mse --model normal --truth poly:2 --noise gauss:0.5 --n 50 --reps 1500 --kernel gauss --bandwidth 1e4 --at $T/p2"
"$GFI" $M --threads 1 >"$T/m1" || bad "regress-mse ran"
"$GFI" $M --threads 2 >"$T/m2"
cmp -s <(grep -v '^# \(command\|threads\|--threads\)' "$T/m1") <(grep -v '^# \(command\|threads\|--threads\)' "$T/m2") && ok || bad "regress-mse depends on threads"
[ "$(grep '^#' "$T/m1" | tail -1)" = "# x1 f bias var mse mse_se" ] && ok || bad "regress-mse column line"
grep -v '^#' "$T/m1" | awk '{ d = $5 - 0.005; if (d < 0) d = -d; if (d > 4 * $6) b = 1 } END { exit b }' && ok || bad "regress-mse sigma^2/N: $(cat "$T/m1")"
expect 0 "" -- "$GFI" regress-mse --model normal --truth sin --n 300 --reps 5 --phi pow:1 --R 2 --points 20
grep -q '^# flagged: [0-9]* of 100' "$T/out" && ok || bad "regress-mse flag count line"
expect 2 "\-\-reps: must be at least 2" -- "$GFI" regress-mse --model normal --truth sin --n 30 --reps 1 --R 2
expect 2 "\-\-reps: required" -- "$GFI" regress-mse --model normal --truth sin --n 30 --R 2
expect 2 "\-\-at: give either" -- "$GFI" regress-mse --model normal --truth sin --n 30 --reps 3 --R 2 --at "$T/p2" --points 4
expect 1 "point file $T/missing" -- "$GFI" regress-mse --model normal --truth sin --n 30 --reps 3 --R 2 --at "$T/missing"

# --- bad input: files (exit 1, file:line:column)
: >"$T/empty"
printf '1 2 3\n3 abc 4\n' >"$T/nonnum"
printf '1 2 3\n3 4\n' >"$T/short"
printf '1 2 3\n3 nan 1\n' >"$T/nan"
printf '1 2\n3 4\n' >"$T/two"
R="regress --phi pow:4 --R 1"
expect 1 "$T/missing" -- "$GFI" $R --data "$T/missing" --at "$T/q"
expect 1 "$T/empty: no data rows" -- "$GFI" $R --data "$T/empty" --at "$T/q"
expect 1 "$T/nonnum:2:2: not a number: 'abc'" -- "$GFI" $R --data "$T/nonnum" --at "$T/q"
expect 1 "$T/short:2:3: expected 3 columns, found 2" -- "$GFI" $R --data "$T/short" --at "$T/q"
expect 1 "$T/nan:2:2: value is NaN" -- "$GFI" $R --data "$T/nan" --at "$T/q"
expect 1 "data file $T/two:1: 2 columns, need D = 2 inputs" -- "$GFI" $R --data "$T/two" --dim 2 --at "$T/q"
expect 1 "query file $T/nonnum:1:3: too many columns: expected 2" -- "$GFI" $R --data "$T/data" --dim 2 --at "$T/nonnum"
expect 1 "query file $T/missing" -- "$GFI" $R --data "$T/data" --dim 2 --at "$T/missing"
# --- a grid at a loose tol goes by the grid route, which bins it: the same
# flagged rows as the direct route (pow:3 has negative weights) and every
# other row within the printed bound (relative to max |y|)
GR="regress --model normal --truth sin --noise gauss:0.1 --n 200000 --seed 3 --R 10 --phi pow:3 --grid -9:9:1001 --tol 1e-4"
if "$GFI" $GR --method fast >"$T/gbf" 2>"$T/err" && "$GFI" $GR --method direct >"$T/gbd" 2>>"$T/err"; then
  ok
  grep -q '^# method: fast, binned' "$T/gbf" && ok || bad "regress --grid at tol 1e-4 not binned: $(grep '^# method' "$T/gbf")"
  [ "$(grep '^# flagged' "$T/gbf")" = "$(grep '^# flagged' "$T/gbd")" ] && ok ||
    bad "regress --grid: binned flags $(grep '^# flagged' "$T/gbf") != direct $(grep '^# flagged' "$T/gbd")"
  bnd=$(sed -n 's/^# method: .*(\([0-9.e+-]*\) relative to \([0-9.e+-]*\)).*/\1 \2/p' "$T/gbf")
  paste <(data "$T/gbf") <(data "$T/gbd") | awk -v b="${bnd% *}" -v sc="${bnd#* }" '
    { if (($2 == "nan") != ($4 == "nan")) bad++; else if ($2 != "nan") { d = $2 - $4; if (d < 0) d = -d; if (d > m) m = d } }
    END { if (b == "" || bad || !(m <= b * sc)) { print "binned NW grid: " bad + 0 " flag mismatches, max diff " m " bound " b * sc; exit 1 } }' &&
    ok || bad "regress --grid binned within its bound"
else
  bad "regress --grid: $(cat "$T/err")"
fi
# --- bad input: options (exit 2, the option named)
expect 2 "\-\-R: radius must be > 0" -- "$GFI" regress --data "$T/data" --dim 2 --R 0 --at "$T/q"
expect 2 "\-\-R: expected 1 or D = 2 values, got 3" -- "$GFI" regress --data "$T/data" --dim 2 --R 1,2,3 --at "$T/q"
expect 2 "\-\-R: required" -- "$GFI" regress --data "$T/data" --at "$T/q"
expect 2 "\-\-phi: power l must be in 1..8, got 9" -- "$GFI" regress --data "$T/data" --phi pow:9 --R 1 --at "$T/q"
expect 2 "\-\-phi: unknown phi 'tanh'" -- "$GFI" regress --data "$T/data" --phi tanh --R 1 --at "$T/q"
expect 2 "\-\-at: required" -- "$GFI" regress --data "$T/data" --R 1
expect 2 "\-\-data: required" -- "$GFI" regress --R 1 --at "$T/q"
expect 2 "\-\-data: give either" -- "$GFI" regress --data "$T/data" --model normal --truth sin --n 3 --seed 1 --R 1 --at "$T/q"
expect 2 "\-\-truth: required with --model" -- "$GFI" regress --model normal --n 3 --seed 1 --R 1 --at "$T/g1"
expect 2 "\-\-seed: required with --model" -- "$GFI" regress --model normal --truth sin --n 3 --R 1 --at "$T/g1"
expect 2 "\-\-n: --n, --seed, --truth and --noise go with --model" -- "$GFI" regress --data "$T/data" --truth sin --R 1 --at "$T/q"
expect 2 "\-\-truth: truth 'cosh': unknown truth" -- "$GFI" regress --model normal --truth cosh --n 3 --seed 1 --R 1 --at "$T/g1"
expect 2 "\-\-truth: truth 'poly:1,x': malformed number at column 8" -- "$GFI" regress-sample --model normal --truth poly:1,x --n 3
expect 2 "\-\-truth: truth 'poly:1;axis=3': axis 3 outside 1..2" -- "$GFI" regress-sample --model normal --dim 2 --truth "poly:1;axis=3" --n 3
expect 2 "\-\-noise: noise 'gauss:-1'" -- "$GFI" regress-sample --model normal --truth sin --noise gauss:-1 --n 3
expect 2 "\-\-noise" -- "$GFI" regress --model normal --truth sin --noise laplace --n 3 --seed 1 --R 1 --at "$T/g1"
expect 2 "\-\-model" -- "$GFI" regress-sample --model foo --truth sin --n 3
expect 2 "\-\-denom-tol: must be in \[0, 1)" -- "$GFI" regress --data "$T/data" --denom-tol 2 --R 1 --at "$T/q"
expect 2 "\-\-bandwidth: required" -- "$GFI" regress --data "$T/data" --kernel gauss --at "$T/q"
expect 2 "\-\-bandwidth" -- "$GFI" regress --data "$T/data" --dim 2 --kernel gauss --bandwidth 1,2,2,1 --at "$T/q"
expect 2 "\-\-bandwidth: only for --kernel gauss" -- "$GFI" regress --data "$T/data" --bandwidth 1 --R 1 --at "$T/q"
expect 2 "\-\-kernel: unknown kernel" -- "$GFI" regress --data "$T/data" --kernel epan --R 1 --at "$T/q"
expect 2 "\-\-bogus: unknown option" -- "$GFI" regress --bogus
expect 2 "\-\-n: must be at least 1" -- "$GFI" regress-sample --model normal --truth sin --n 0
expect 2 "unexpected argument" -- "$GFI" regress-sample --model normal --truth sin --n 3 extra

finish "cli-regress"
