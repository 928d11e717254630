#!/usr/bin/env bash
# gfi reproduce --quick: every expected file (data, PNG, PDF, summaries),
# every MSE finite and positive in summary.md and summary.dat (and the two
# agreeing), the run's time, thread-count independence, a failing step named
# with exit 1, the missing-gnuplot message, and usage errors.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot not installed"; exit 77; }

# Under the sanitizers (GFI_SANITIZE set by meson) the runs take smaller
# samples: the same steps and files, a tenth of the time (the plain build
# runs the sizes of --quick).
quick="--quick"
small="--n-density 2000 --n-regress 2000 --points 100 --seeds 2 --rates none --flt none --quick --quiet"
if [ "${GFI_SANITIZE:-none}" != none ]; then
  quick="--quick --n-density 2000 --n-regress 800 --points 60"
  small="--n-density 600 --n-regress 300 --points 40 --seeds 2 --rates none --flt none --quick --quiet"
fi

"$GFI" reproduce --help >"$T/help" && grep -q "usage: gfi reproduce" "$T/help" && ok || bad "--help"

# --- the quick run
t0=$(date +%s.%N)
"$GFI" reproduce $quick --out "$T/r" 2>"$T/err"
rc=$?
t1=$(date +%s.%N)
[ $rc -eq 0 ] && ok || bad "gfi reproduce --quick exited $rc: $(tail -3 "$T/err")"
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
echo "gfi reproduce $quick: $secs s"
# one progress line per step, numbered [k/n] up to n
n=$(grep -c '^\[[0-9]*/[0-9]*\] .* \.\.\. [0-9.]* s (CPU [0-9.]* s)$' "$T/err")
total=$(sed -n 's/^\[1\/\([0-9]*\)\].*/\1/p' "$T/err")
[ -n "$total" ] && [ "$n" -eq "$total" ] && ok || bad "progress lines: $n of ${total:-?}: $(head -3 "$T/err")"

R=$T/r
for f in fig1a_curve fig1a_mse fig1a_sensitivity fig1b_grid fig1b_mse fig1b_sensitivity \
         fig2_slice fig2_points fig2_mse fig2_sensitivity summary \
         rates/rates_table regress_rates/regress_rates regress_rates/regress_rates_table \
         regress_rates/regress_points lemma1/lemma1 lemma1/lemma1_delta flt/flt_err_vs_r flt/flt_rstar; do
  if [ -s "$R/$f.dat" ] && grep -q '^# gfi\|^# flt_study' "$R/$f.dat" && grep -vq '^#' "$R/$f.dat"; then ok
  else bad "$f.dat missing, empty or without metadata"; fi
done
for f in fig1a fig1b fig2 sensitivity rates/mise_rates regress_rates/regress_rates regress_rates/regress_points lemma1/lemma1 \
         flt/flt_err_vs_r flt/flt_fig4; do
  if [ "$(head -c 8 "$R/$f.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
     [ "$(stat -c %s "$R/$f.png")" -gt 10000 ]; then ok; else bad "$f.png missing or not a PNG"; fi
  if [ "$(head -c 4 "$R/$f.pdf" 2>/dev/null)" = "%PDF" ]; then ok; else bad "$f.pdf missing or not a PDF"; fi
done
[ -s "$R/summary.md" ] && [ -s "$R/flt/flt_summary.md" ] && ok || bad "summary.md or flt/flt_summary.md missing"
# the figure scripts draw without a warning from gnuplot (an empty iteration,
# a file with no valid points, a missing file): each script's log is empty
ls "$R"/logs/gnuplot_*.log >/dev/null 2>&1 && ok || bad "no gnuplot logs in $R/logs"
if grep -il 'warning' "$R"/logs/gnuplot_*.log >"$T/gpwarn"; then
  bad "gnuplot warnings: $(cat "$T/gpwarn" | tr '\n' ' '): $(grep -ih warning "$R"/logs/gnuplot_*.log | sort -u | head -5)"
else ok; fi
# the FLT summary prints no bare nan for sizes a method skips
grep -qw 'nan' "$R/flt/flt_summary.md" && bad "flt_summary.md prints nan" || ok

# summary.dat: 12 rows (3 experiments x 3 policies (fixed, oracle, data-driven) + 3 prediction rows), MSE finite and > 0
rows=$(grep -vc '^#' "$R/summary.dat")
[ "$rows" -eq 12 ] && ok || bad "summary.dat has $rows rows, expected 12"
# the data-driven policy: a row per experiment and prediction, its radius positive, and the
# estimate at seed 1's chosen radius in the curve files (their last column)
awk '!/^#/ && $2 == "data-driven" { n++; if (!($3 > 0)) exit 1 } END { exit n != 4 }' "$R/summary.dat" && ok ||
  bad "summary.dat: expected 4 data-driven rows with R > 0"
for f in fig1a_curve:5 fig1b_grid:6 fig2_slice:6 fig2_points:6; do
  awk -v c="${f#*:}" '/^# .*data_R$/ { h = 1 } !/^#/ && NF { if (NF != c) exit 1 } END { exit !h }' \
    "$R/${f%%:*}.dat" && ok || bad "${f%%:*}.dat: no data_R column"
done
awk '!/^#/ { for (i = 6; i <= 9; i++) if ($i !~ /^[0-9.eE+-]+$/) { print "non-numeric " $0; exit 1 }
             if (!($6 > 0) || $6 > 1e300) { print "MSE not finite and positive: " $0; exit 1 } }' \
  "$R/summary.dat" && ok || bad "summary.dat MSE"
# summary.md: the main table's MSE cells, finite, positive, equal to summary.dat's (3 digits)
grep '^| Figure' "$R/summary.md" | awk -F'|' '{ split($7, a, " "); print a[1] }' >"$T/md_mse"
awk '!/^#/ { printf "%.3g\n", $6 }' "$R/summary.dat" >"$T/dat_mse"
[ "$(wc -l <"$T/md_mse")" -eq 12 ] && ok || bad "summary.md main table has $(wc -l <"$T/md_mse") rows"
awk '{ if (!($1 + 0 > 0) || $1 !~ /^[0-9.e+-]+$/) exit 1 }' "$T/md_mse" && ok || bad "summary.md MSE not finite positive: $(cat "$T/md_mse")"
awk 'NR == FNR { a[FNR] = $1 + 0; next } { if (a[FNR] != $1 + 0) exit 1 }' "$T/md_mse" "$T/dat_mse" && ok ||
  bad "summary.md and summary.dat disagree"
for s in "Sensitivity to R" "Density rate checks" "Regression rate checks" "Theorem 2 is pointwise" "Lemma 1" "FLT" "paper"; do
  grep -q "$s" "$R/summary.md" && ok || bad "summary.md lacks '$s'"
done
# every figure the summary shows exists
# table cells that do not apply read '-', never nan (the Gaussian-KDE baseline rows)
grep -q '^| gauss-kde ' "$R/summary.md" && ok || bad "summary.md has no Gaussian-KDE baseline row"
! grep '^|' "$R/summary.md" | grep -qiw 'nan' && ok || bad "summary.md tables print nan: $(grep '^|' "$R/summary.md" | grep -iw nan | head -3)"
for img in $(grep -o '](\([^)]*\.png\))' "$R/summary.md" | sed 's/^](\(.*\))$/\1/'); do
  [ -s "$R/$img" ] && ok || bad "summary.md shows $img, which is missing"
done

# --- identical numbers for 1 and 2 threads (small sizes, no rates/FLT)
"$GFI" reproduce $small --threads 1 --out "$T/t1" && "$GFI" reproduce $small --threads 2 --out "$T/t2" || bad "small runs"
for f in fig1a_mse fig1b_mse fig2_mse summary; do
  cmp -s <(grep -v '^#' "$T/t1/$f.dat") <(grep -v '^#' "$T/t2/$f.dat") && ok || bad "$f.dat differs between 1 and 2 threads"
done

# --- an output folder that cannot be made fails before any step, and says so in one line
"$GFI" reproduce --quick --out "$T/no/such/dir" >/dev/null 2>"$T/derr"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$T/derr")" -eq 1 ] &&
  grep -q "^gfi reproduce: step 'setting up the output folder' failed: cannot create $T/no/such/dir" "$T/derr" &&
  ok || bad "unwritable output folder: rc $rc, $(cat "$T/derr")"

# --- a failing step is named and the exit status is 1: a plot script gnuplot rejects
mkdir -p "$T/badplots"
echo "this is not gnuplot" >"$T/badplots/fourierformer_fig1a.gp"
GFI_PLOTS_DIR=$T/badplots "$GFI" reproduce $small --out "$T/f" 2>"$T/ferr"
rc=$?
[ $rc -eq 1 ] && grep -q "^gfi reproduce: step 'figure fig1a (plots/fourierformer_fig1a.gp)' failed: .*gnuplot exited with status 1" "$T/ferr" &&
  ok || bad "failing step: rc $rc, $(tail -1 "$T/ferr")"
# --- no gnuplot: a clear message before any work
PATH=/nonexistent "$GFI" reproduce --quick --out "$T/g" 2>"$T/gerr"
rc=$?
[ $rc -eq 1 ] && grep -q "gnuplot not found" "$T/gerr" && [ ! -e "$T/g" ] && ok || bad "missing gnuplot: rc $rc, $(cat "$T/gerr")"
# --- usage errors
"$GFI" reproduce --out "$T/a b" 2>"$T/uerr"
[ $? -eq 2 ] && grep -q -- "--out" "$T/uerr" && ok || bad "--out with a space: $(cat "$T/uerr")"
for args in "--seeds 1" "--flt maybe" "--phi pow:9" "--R 0" "--sens-box 1,-2" "--model-1d uniform" "--bogus"; do
  "$GFI" reproduce $args --out "$T/u" 2>"$T/uerr"
  rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/uerr")" -eq 1 ] && ok || bad "'$args': rc $rc, $(cat "$T/uerr")"
done

finish "reproduce_test"
