#!/usr/bin/env bash
# The FLT study in --quick mode: every table and the summary exist, the
# measured numbers are finite (c and Theorem 4.2's r may be inf by design),
# the error falls as r^(-1/2) where c is finite, the features are unbiased and
# their variance is the exact (M2 - |f|^2)/r within standard errors, and FLT's
# own configurations are there with Theorem 4.2's bound holding where c is
# finite and said to be void where it is not.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
STUDY=$GFI
"$STUDY" --quick --out "$T" 2>"$T/log" || bad "flt_study --quick failed: $(cat "$T/log")"
for f in flt_err_vs_r flt_rstar flt_err_vs_tau flt_moments flt_shapes_1d flt_shape2d_local_k2 flt_shape2d_paper_k3 \
         flt_attention_error flt_attention_scaling flt_err_slopes flt_paper; do
  [ -s "$T/$f.dat" ] && ok || bad "$f.dat missing"
  [ "$(grep -vc '^#' "$T/$f.dat")" -gt 0 ] && ok || bad "$f.dat has no rows"
  grep -q '^# version:' "$T/$f.dat" && ok || bad "$f.dat lacks metadata"
done
[ -s "$T/flt_summary.md" ] && ok || bad "summary missing"
fin() { # file, columns that must be finite numbers
  local f=$1; shift
  awk -v cols="$*" 'BEGIN { n = split(cols, c, " ") } /^#/ || NF == 0 { next }
    { for (i = 1; i <= n; i++) { v = $(c[i]); if (v !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) { print FILENAME ": row " NR " column " c[i] " = " v; bad = 1 } } }
    END { exit bad }' "$T/$f"
}
fin flt_err_vs_r.dat 1 2 3 4 5 6 10 && ok || bad "error table not finite"
fin flt_err_vs_tau.dat 1 3 4 5 6 && ok || bad "tau table not finite"
fin flt_moments.dat 2 && ok || bad "moments not finite"
fin flt_shapes_1d.dat 1 2 3 4 5 6 7 8 9 10 11 12 13 && ok || bad "shapes not finite"
fin flt_attention_error.dat 4 && ok || bad "attention error not finite"
fin flt_attention_scaling.dat 1 2 3 4 5 && ok || bad "scaling not finite"
fin flt_rstar.dat 1 2 3 6 && ok || bad "rstar table not finite"
# the Gaussian case's r* is reached and lies below Theorem 4.2's bound
awk '/^# case 0/ {b = 1} /^# case 1/ {b = 0} b && !/^#/ && NF { n++; if (!($4 < $8)) bad = 1 } END { exit !(n > 0 && !bad) }' "$T/flt_rstar.dat" &&
  ok || bad "r* vs Thm 4.2: $(cat "$T/flt_rstar.dat")"
# unbiasedness and Thm A.3 in the moments table (cases with finite c)
awk '!/^#/ && NF { if ($2 > 4.5) bad = 1; if ($5 != "inf" && $3 > 1.2) bad = 1 } END { exit bad }' "$T/flt_moments.dat" &&
  ok || bad "moments: $(cat "$T/flt_moments.dat")"
# r^(-1/2): every case with finite c has a slope within 3 standard errors of -1/2
awk '!/^#/ && NF && $2 != "inf" { n++; if (!($3 + 0.5 <= 3 * $4 && -0.5 - $3 <= 3 * $4) || !($4 > 0 && $4 < 0.2)) { print; b = 1 } }
     END { exit b || n < 4 }' "$T/flt_err_slopes.dat" && ok || bad "r^-1/2 slopes: $(grep -v '^# [a-z]' "$T/flt_err_slopes.dat")"
# moments: the mean within 4.6 s.e. over every difference (Bonferroni over 31 complex differences at 0.001);
# where M2 = int g^2/p is finite, the measured variance is the exact one (mean ratio within 4/sqrt(T) of 1,
# every difference within 5 s.e. of it)
Tm=$(sed -n 's/^# setting: .* r = [0-9]*, \([0-9]*\) trials.*/\1/p' "$T/flt_moments.dat")
awk -v T="$Tm" '!/^#/ && NF { if ($2 > 4.6) b = 1; if ($6 != "inf" && $6 != "nan") { n++; if ($7 < 1 - 4 / sqrt(T) || $7 > 1 + 4 / sqrt(T) || $8 > 5) b = 1 } }
  END { exit b || n < 3 || T < 100 }' "$T/flt_moments.dat" && ok || bad "moment identities (T=$Tm): $(grep -v '^# [a-z]' "$T/flt_moments.dat")"
# FLT's own configurations: the language-model rows at L = 512 and r = 16, 32, 64 with the N(0, 1) proposal,
# the 3-D point clouds and the sums of boxes; where c is finite the q99 error lies below Theorem 4.2's eps
# (delta = 0.01) at every r, and where c = inf the summary says there is no guarantee
grep -q '^# case 0: LM, L=512 | rpe mixture:w=1;mu=0;s=0.5 | proposal gauss:tau=1 | ell 1 | L 512 | c 2.50' "$T/flt_paper.dat" &&
  ok || bad "LM case: $(grep '^# case' "$T/flt_paper.dat")"
[ "$(grep -c '^# case .*molecule.* | ell 3 |' "$T/flt_paper.dat")" -ge 2 ] && ok || bad "molecule cases"
grep -q '^# case .*rpe boxes:.*k=2,1 ' "$T/flt_paper.dat" && ok || bad "boxes with per-axis k"
awk '/^# case/ { fin = ($NF != "inf") } !/^#/ && NF && fin { n++; if (!($4 < $7)) b = 1 } END { exit b || n < 10 }' "$T/flt_paper.dat" &&
  ok || bad "q99 above Theorem 4.2's eps: $(cat "$T/flt_paper.dat")"
awk '!/^#/ && NF && $1 <= 64' "$T/flt_paper.dat" | awk '{ r[$1]++ } END { exit !(r[16] && r[32] && r[64]) }' && ok || bad "r = 16, 32, 64"
[ "$(grep -c 'none (c = inf)' "$T/flt_summary.md")" -ge 4 ] && grep -q 'no guarantee at all' "$T/flt_summary.md" &&
  ok || bad "summary does not say where c = inf leaves no guarantee"
fin flt_paper.dat 1 2 3 4 8 && ok || bad "paper table not finite"
finish "flt study"
