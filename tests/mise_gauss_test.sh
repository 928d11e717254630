#!/usr/bin/env bash
# gfi mise --kernel gauss: the Gaussian KDE baseline's exact MISE against
# values computed here from the formula, against R's ks::mise.mixt (when R
# and ks are installed; skipped with a message otherwise) and against its
# own Monte Carlo within standard errors; usage errors.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
set -f # model specs with '*' are split into words below, never globbed

mise() { "$GFI" mise "$@" | data /dev/stdin | awk '{print $3}'; }

# --- exact against the closed form for a standard normal truth, written out here:
# MISE = 1/(2 sqrt(pi) N h) + (1 - 1/N) g(2) - 2 g(1) + g(0), g(c) = 1/sqrt(2 pi (c h^2 + 2))
for nh in "100 0.5" "1000 0.3" "100000 0.12"; do
  set -- $nh
  want=$(awk -v n="$1" -v h="$2" 'function g(c) { return 1 / sqrt(2 * 3.14159265358979324 * (c * h * h + 2)) }
    BEGIN { printf "%.15g", 1 / (2 * sqrt(3.14159265358979324) * n * h) + (1 - 1 / n) * g(2) - 2 * g(1) + g(0) }')
  got=$(mise --model normal --n "$1" --kernel gauss --bandwidth "$2" --exact)
  awk -v a="$got" -v b="$want" 'BEGIN { exit !(a > 0 && (a - b) / b < 1e-10 && (b - a) / b < 1e-10) }' && ok ||
    bad "normal N=$1 h=$2: $got, formula $want"
done
# columns as for the Fourier MISE
expect 0 "" -- "$GFI" mise --model normal:cov=1,0.5,0.5,2 --dim 2 --n 400 --kernel gauss --bandwidth 0.3,0.4 --exact
[ "$(tail -1 "$T/out" | awk '{print NF}')" = 9 ] && grep -q '^# n h mise se bias2 var lo95 hi95 reps$' "$T/out" &&
  grep -q '^# H: 0.0899.* 0 0 0.16' "$T/out" && ok || bad "columns: $(cat "$T/out")"

# --- exact against Monte Carlo (closed-form ISE per replication), 1-D mixture and 2-D full H
while read -r args; do
  "$GFI" mise $args --exact >"$T/ex" || bad "exact $args"
  "$GFI" mise $args --mc 300 --seed 4 >"$T/mc" || bad "mc $args"
  within4 "$(col "$T/mc" mise)" "$(col "$T/mc" se)" "$(col "$T/ex" mise)" 0 && ok || bad "MC vs exact: $args"
done <<'LIST'
--model mw:6 --n 300 --kernel gauss --bandwidth 0.25
--model normal:cov=1,0.9,0.9,1 --dim 2 --n 200 --kernel gauss --bandwidth 0.2,0.15,0.15,0.2
--model normal --dim 3 --n 150 --kernel gauss --bandwidth 0.5
LIST
"$GFI" mise --model mw:6 --n 200 --kernel gauss --bandwidth 0.3 --mc 20 --seed 2 --threads 1 | data /dev/stdin >"$T/t1"
"$GFI" mise --model mw:6 --n 200 --kernel gauss --bandwidth 0.3 --mc 20 --seed 2 --threads 3 | data /dev/stdin >"$T/t3"
cmp -s "$T/t1" "$T/t3" && ok || bad "gauss MC depends on the thread count"
# opt: the MISE-optimal h, no larger than its neighbours
hopt=$("$GFI" mise --model mw:6 --n 1000 --kernel gauss --bandwidth opt --exact | data /dev/stdin | awk '{print $2}')
m0=$(mise --model mw:6 --n 1000 --kernel gauss --bandwidth "$hopt" --exact)
m1=$(mise --model mw:6 --n 1000 --kernel gauss --bandwidth "$(awk -v h="$hopt" 'BEGIN {print h * 1.05}')" --exact)
m2=$(mise --model mw:6 --n 1000 --kernel gauss --bandwidth "$(awk -v h="$hopt" 'BEGIN {print h / 1.05}')" --exact)
awk -v a="$m0" -v b="$m1" -v c="$m2" 'BEGIN { exit !(a < b && a < c) }' && ok || bad "opt h = $hopt is not a minimum"

# --- R's ks::mise.mixt
if command -v Rscript >/dev/null 2>&1 && Rscript -e 'suppressMessages(library(ks))' >/dev/null 2>&1; then
  while IFS='@' read -r args rexpr; do
    got=$(mise $args --exact)
    want=$(Rscript -e "suppressMessages(library(ks)); cat(sprintf('%.15g', $rexpr))") || { bad "Rscript $rexpr"; continue; }
    awk -v a="$got" -v b="$want" 'BEGIN { d = (a - b) / b; exit !(d < 1e-9 && d > -1e-9) }' && ok ||
      bad "ks::mise.mixt: $args: gfi $got, ks $want"
  done <<'LIST'
--model mw:6 --n 500 --kernel gauss --bandwidth 0.2@mise.mixt(h=0.2, mus=c(-1,1), sigmas=c(2/3,2/3), props=c(0.5,0.5), samp=500)
--model normal:mean=1,-1;cov=1,0.5,0.5,2 --dim 2 --n 1000 --kernel gauss --bandwidth 0.3,0.1,0.1,0.5@mise.mixt(H=matrix(c(0.3,0.1,0.1,0.5),2), mus=rbind(c(1,-1)), Sigmas=matrix(c(1,0.5,0.5,2),2), props=1, samp=1000)
--model normal:cov=1,0.99,0.99,1 --dim 2 --n 100000 --kernel gauss --bandwidth 0.1,0.05@mise.mixt(H=diag(c(0.01,0.0025)), mus=rbind(c(0,0)), Sigmas=matrix(c(1,0.99,0.99,1),2), props=1, samp=100000)
--model mix:0.4*normal:mean=-1.5,0|0.6*normal:mean=1.5,0.5;cov=1,0.6,0.6,1 --dim 2 --n 3000 --kernel gauss --bandwidth 0.3,0.05,0.05,0.2@mise.mixt(H=matrix(c(0.3,0.05,0.05,0.2),2), mus=rbind(c(-1.5,0),c(1.5,0.5)), Sigmas=rbind(diag(2),matrix(c(1,0.6,0.6,1),2)), props=c(0.4,0.6), samp=3000)
--model normal --dim 3 --n 2000 --kernel gauss --bandwidth 0.4@mise.mixt(H=diag(rep(0.16,3)), mus=rbind(c(0,0,0)), Sigmas=diag(3), props=1, samp=2000)
LIST
else
  echo "mise gauss: R's ks package not available: the ks::mise.mixt comparison is skipped" >&2
fi

# --- usage errors
expect 2 "\-\-bandwidth: required for --kernel gauss" -- "$GFI" mise --model normal --n 10 --kernel gauss --exact
expect 2 "\-\-R: only for --kernel fourier" -- "$GFI" mise --model normal --n 10 --kernel gauss --bandwidth 1 --R 2 --exact
expect 2 "\-\-phi: only for --kernel fourier" -- "$GFI" mise --model normal --n 10 --kernel gauss --bandwidth 1 --phi pow:2 --exact
expect 2 "\-\-model: 'laplace': the Gaussian KDE's MISE needs a normal-mixture truth" -- "$GFI" mise --model laplace --n 10 --kernel gauss --bandwidth 1 --exact
expect 2 "\-\-bandwidth: the matrix H must be positive definite" -- "$GFI" mise --model normal --dim 2 --n 10 --kernel gauss --bandwidth 1,2,2,1 --exact
expect 2 "\-\-bandwidth: expected 1, D = 2 or D\*D = 4 values, got 3" -- "$GFI" mise --model normal --dim 2 --n 10 --kernel gauss --bandwidth 1,2,3 --exact
expect 2 "\-\-seed: required with --mc" -- "$GFI" mise --model normal --n 10 --kernel gauss --bandwidth 1 --mc 5
expect 2 "\-\-kernel: unknown kernel 'epan'" -- "$GFI" mise --model normal --n 10 --kernel epan --bandwidth 1 --exact
finish "mise gauss"
