#!/usr/bin/env bash
# gfi correlation: the Fourier radius and the isotropic Gaussian bandwidth
# against gfi mise at those parameters, the full-H Gaussian optimum against
# its closed form h0^2 Sigma, MISE(0)/sqrt(1 - rho^2) (affine equivariance
# of the Gaussian KDE), the ordering isotropic >= full H, and usage errors.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

expect 0 "" -- "$GFI" correlation --rho 0,0.9 --n 1000 --threads 1
cp "$T/out" "$T/c"
[ "$(data "$T/c" | wc -l)" = 2 ] && [ "$(data "$T/c" | awk '{print NF}' | sort -u)" = 12 ] &&
  grep -q '^# rho n R_opt mise_fourier h_opt mise_iso H11 H12 H22 mise_full fourier_over_full iso_over_full$' "$T/c" &&
  ok || bad "columns: $(cat "$T/c")"
set -- $(data "$T/c" | awk 'NR == 1')
m0=${10}
set -- $(data "$T/c" | awk 'NR == 2')
rho=$1 R=$3 mf=$4 h=$5 mi=$6 H11=$7 H12=$8 H22=$9 mfull=${10}
# closed form of the full-H optimum
awk -v a="$mfull" -v b="$m0" -v r="$rho" 'BEGIN { w = b / sqrt(1 - r * r); d = (a - w) / w; exit !(d < 1e-5 && d > -1e-5) }' &&
  ok || bad "full-H MISE $mfull, closed form $m0/sqrt(1-$rho^2)"
awk -v a="$H12" -v b="$H11" -v c="$H22" -v r="$rho" 'BEGIN { d = a / b - r; e = c / b - 1; exit !(d < 1e-3 && d > -1e-3 && e < 1e-3 && e > -1e-3) }' &&
  ok || bad "H* = $H11 $H12 $H22 is not proportional to Sigma (rho $rho)"
awk -v a="$mi" -v b="$mfull" 'BEGIN { exit !(a > b) }' && ok || bad "isotropic $mi not above full H $mfull"
# the Fourier and isotropic Gaussian MISE at the printed optima (6 digits: the MISE is flat there)
spec=normal:cov=1,$rho,$rho,1
got=$("$GFI" mise --model "$spec" --dim 2 --n 1000 --R "$R" --exact | data /dev/stdin | awk '{print $3}')
awk -v a="$got" -v b="$mf" 'BEGIN { d = (a - b) / b; exit !(d < 1e-6 && d > -1e-6) }' && ok ||
  bad "Fourier MISE $mf, gfi mise at R = $R: $got"
got=$("$GFI" mise --model "$spec" --dim 2 --n 1000 --kernel gauss --bandwidth "$h" --exact | data /dev/stdin | awk '{print $3}')
awk -v a="$got" -v b="$mi" 'BEGIN { d = (a - b) / b; exit !(d < 1e-6 && d > -1e-6) }' && ok ||
  bad "isotropic Gaussian MISE $mi, gfi mise at h = $h: $got"
# a bandwidth matrix near H* does no better
for dH in "1.01 1 1" "0.99 1 1" "1 1.02 1" "1 0.98 1"; do
  set -- $dH
  Hp=$(awk -v a="$H11" -v b="$H12" -v c="$H22" -v x="$1" -v y="$2" -v z="$3" 'BEGIN { printf "%.12g,%.12g,%.12g,%.12g", a * x, b * y, b * y, c * z }')
  got=$("$GFI" mise --model "$spec" --dim 2 --n 1000 --kernel gauss --bandwidth "$Hp" --exact | data /dev/stdin | awk '{print $3}')
  awk -v a="$got" -v b="$mfull" 'BEGIN { exit !(a >= b * (1 - 1e-9)) }' && ok || bad "H = $Hp gives $got < $mfull"
done

expect 2 "--rho" -- "$GFI" correlation --rho 1
expect 2 "--rho" -- "$GFI" correlation --rho x
expect 2 "--n" -- "$GFI" correlation --n 1
expect 2 "--l" -- "$GFI" correlation --l 9
finish "correlation"
