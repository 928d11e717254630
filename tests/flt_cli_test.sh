#!/usr/bin/env bash
# FLT command-line contract: output columns, agreement of 'gfi flt-error' with
# an independent simulation in awk (its own random numbers, compared within
# standard errors), flt-complexity against Theorem 4.2, and bad inputs.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

for c in flt-error flt-complexity; do
  expect 0 "" -- "$GFI" "$c" --help
  grep -q "usage: gfi $c" "$T/out" && ok || bad "$c --help text"
done

# --- the contract's columns, and c = inf for tau = 0.159 < 1/(2 pi)
"$GFI" flt-error --rpe gauss:s=1 --proposal gauss:tau=0.159 --ell 1 --L 32 --r 64 --trials 50 --seed 1 >"$T/e" || bad "flt-error ran"
cols=$(grep '^#' "$T/e" | tail -1)
for want in L r trials mean q50 q90 q99 c; do
  echo "$cols" | tr ' ' '\n' | grep -qx "$want" && ok || bad "column $want missing: $cols"
done
[ "$(grep -vc '^#' "$T/e")" -eq 1 ] && ok || bad "one row expected"
grep -v '^#' "$T/e" | awk '$8 == "inf" {f=1} END {exit !f}' && ok || bad "c should be inf: $(cat "$T/e")"
"$GFI" flt-error --rpe gauss:s=1 --proposal gauss:tau=0.16 --L 32 --r 64 --trials 50 --seed 1 | grep -v '^#' |
  awk '{c = $8 + 0; e = 2 * 3.141592653589793 * 0.16; exit !(c > 0 && (c - e)^2 < 1e-18)}' && ok || bad "c = 2 pi s tau for tau = 0.16"
# same seed, same numbers; another thread count, same numbers
"$GFI" flt-error --rpe local:v=3,k=2 --proposal cauchy:tau=0.1 --L 40 --r 8,32 --trials 30 --seed 4 --threads 1 | grep -v '^#' >"$T/a"
"$GFI" flt-error --rpe local:v=3,k=2 --proposal cauchy:tau=0.1 --L 40 --r 8,32 --trials 30 --seed 4 --threads 2 | grep -v '^#' >"$T/b"
cmp -s "$T/a" "$T/b" && ok || bad "thread count changes the output"

# --- independent simulation (awk's own generator): gauss:s=2, p = N(0, 0.1^2), L = 16, r = 32
L=16 R=32 N=400
for feat in complex real; do
  "$GFI" flt-error --rpe gauss:s=2 --proposal gauss:tau=0.1 --L $L --r $R --trials $N --seed 3 --features $feat |
    grep -v '^#' >"$T/g"
  awk -v L=$L -v R=$R -v N=$N -v feat=$feat -v seed=12345 'BEGIN {
    srand(seed); pi = atan2(0, -1); s = 2; tau = 0.1
    for (t = 1; t <= N; t++) {
      for (d = 0; d < L; d++) { sr[d] = 0; si[d] = 0 }
      for (k = 1; k <= R; k++) {
        u1 = rand(); while (u1 == 0) u1 = rand(); u2 = rand()
        xi = tau * sqrt(-2 * log(u1)) * cos(2 * pi * u2)
        g = sqrt(2 * pi) * s * exp(-2 * pi * pi * s * s * xi * xi)
        p = exp(-xi * xi / (2 * tau * tau)) / (sqrt(2 * pi) * tau)
        w = g / p
        for (d = 0; d < L; d++) { sr[d] += w * cos(2 * pi * d * xi); si[d] += w * sin(2 * pi * d * xi) }
      }
      mx = 0; mr = 0
      for (d = 0; d < L; d++) {
        f = exp(-d * d / (2 * s * s)); er = sr[d] / R - f; ei = (feat == "real") ? 0 : si[d] / R
        e = sqrt(er * er + ei * ei); if (e > mx) mx = e; if (er < 0) er = -er; if (er > mr) mr = er
      }
      m1 += mx; m2 += mx * mx; r1 += mr; r2 += mr * mr
    }
    mean = m1 / N; se = sqrt((m2 / N - mean * mean) / (N - 1))
    rmean = r1 / N; rse = sqrt((r2 / N - rmean * rmean) / (N - 1))
    print mean, se, rmean, rse }' >"$T/awk"
  read -r am ase arm arse <"$T/awk"
  read -r _ _ _ gm _ _ _ _ gse grm _ <"$T/g"
  awk -v a="$am" -v as="$ase" -v g="$gm" -v gs="$gse" 'BEGIN { z = (a - g) / sqrt(as * as + gs * gs); if (z < 0) z = -z; exit !(z < 4) }' &&
    ok || bad "$feat: gfi mean max error $gm (se $gse) vs awk $am (se $ase)"
  awk -v a="$arm" -v as="$arse" -v g="$grm" -v gs="$gse" 'BEGIN { z = (a - g) / sqrt(as * as + 2 * gs * gs); if (z < 0) z = -z; exit !(z < 4) }' &&
    ok || bad "$feat: gfi mean max real error $grm vs awk $arm (se $arse)"
done

# --- flt-complexity: rows, columns, and r* well below Theorem 4.2's bound
"$GFI" flt-complexity --rpe gauss:s=2 --proposal optimal --L 16,64 --eps 0.2,0.1 --delta 0.1 --trials 100 --seed 2 --rmax 2048 >"$T/c" || bad "flt-complexity ran"
[ "$(grep '^#' "$T/c" | tail -1)" = "# L eps delta rstar r_below phat trials c r_thm42 ratio" ] && ok || bad "complexity columns"
[ "$(grep -vc '^#' "$T/c")" -eq 4 ] && ok || bad "complexity rows: $(cat "$T/c")"
grep -v '^#' "$T/c" | awk '{ if (!($4 > $5 && $4 < $9 && $6 >= 0.9 && $10 > 1)) bad = 1 } END { exit bad }' && ok || bad "r* vs Thm 4.2: $(cat "$T/c")"
# a smaller eps needs more features
grep -v '^#' "$T/c" | awk '$1 == 64 { if ($2 < 0.15) a = $4; else b = $4 } END { exit !(a > b) }' && ok || bad "r* should grow as eps falls"
"$GFI" flt-complexity --rpe gauss:s=2 --proposal optimal --L 16 --eps 0.001 --delta 0.1 --trials 20 --seed 2 --rmax 64 | grep -v '^#' |
  awk '$4 == "inf" {f=1} END {exit !f}' && ok || bad "unreached r* should be inf"

# --- positions in 2-D and 3-D
"$GFI" flt-error --rpe exp:s=2 --proposal optimal --ell 2 --L 16 --r 32 --trials 10 --seed 1 | grep -q '^# positions: 4 x 4 integer grid' && ok || bad "2-D grid"
printf '0 0 0\n1 0.5 0\n0.2 1 0.3\n' >"$T/pts"
"$GFI" flt-error --rpe 'gbf:w=1,0.5;s=0.6,1.5' --proposal optimal --ell 3 --points "$T/pts" --r 32 --trials 10 --seed 1 | grep -v '^#' | awk '$1 == 3 {f=1} END {exit !f}' && ok || bad "3-D points"
"$GFI" flt-error --rpe gauss:s=1 --proposal gauss:tau=0.3 --ell 3 --cloud normal --L 20 --r 16 --trials 5 --seed 1 | grep -q 'drawn from model normal' && ok || bad "3-D cloud"
printf '1 0 0.1\n-0.5 0 0.05\n' >"$T/mix"
expect 0 "" -- "$GFI" flt-error --rpe "mixture:$T/mix" --proposal gauss:tau=0.2 --L 8 --r 16 --trials 5

# --- bad inputs
expect 2 "--rpe: required" -- "$GFI" flt-error --proposal optimal --L 8 --r 8 --trials 2
expect 2 "unknown RPE family" -- "$GFI" flt-error --rpe wobble:s=1 --proposal optimal --L 8 --r 8 --trials 2
expect 2 "changes sign" -- "$GFI" flt-error --rpe box:v=2 --proposal optimal --L 8 --r 8 --trials 2
expect 2 "--proposal" -- "$GFI" flt-error --rpe box:v=2 --proposal gauss --L 8 --r 8 --trials 2
expect 2 "--features" -- "$GFI" flt-error --rpe box:v=2 --proposal cauchy --L 8 --r 8 --trials 2 --features imag
expect 2 "--r" -- "$GFI" flt-error --rpe box:v=2 --proposal cauchy --L 8 --r 8,4 --trials 2
expect 2 "must be a square" -- "$GFI" flt-error --rpe box:v=2 --proposal cauchy --ell 2 --L 8 --r 8 --trials 2
expect 2 "--points" -- "$GFI" flt-error --rpe gauss:s=1 --proposal cauchy --ell 3 --L 8 --r 8 --trials 2
expect 1 "nonexistent" -- "$GFI" flt-error --rpe mixture:/nonexistent --proposal cauchy --L 8 --r 8 --trials 2
printf '1 0 0.1\n1 x 0.2\n' >"$T/badmix"
expect 1 "badmix:2:2" -- "$GFI" flt-error --rpe "mixture:$T/badmix" --proposal cauchy --L 8 --r 8 --trials 2
expect 2 "--delta" -- "$GFI" flt-complexity --rpe gauss:s=1 --proposal optimal --L 8 --eps 0.1 --delta 1.5 --trials 2
expect 2 "--eps" -- "$GFI" flt-complexity --rpe gauss:s=1 --proposal optimal --L 8 --delta 0.1 --trials 2

finish "flt cli"
