#!/usr/bin/env bash
# The FLT study in --quick mode: every table and the summary exist, and the
# measured numbers are finite (c and Theorem 4.2's r may be inf by design).
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
STUDY=$GFI
"$STUDY" --quick --out "$T" 2>"$T/log" || bad "flt_study --quick failed: $(cat "$T/log")"
for f in flt_err_vs_r flt_rstar flt_err_vs_tau flt_moments flt_shapes_1d flt_shape2d_local_k2 flt_shape2d_paper_k3 \
         flt_attention_error flt_attention_scaling; do
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
finish "flt study"
