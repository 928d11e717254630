#!/usr/bin/env bash
# The bad-input battery: malformed options, hostile files and parameters that
# overflow, over every subcommand. Each case must exit with status 1 (a
# runtime error) or 2 (a usage error), print one line on stderr that names
# the fault (the pattern), and put no NaN or infinity on standard output.
# Usage: bad_input_test.sh path/to/gfi
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
case $GFI in /*) ;; *) GFI=$PWD/$GFI ;; esac
# Every case ends in an exit by error, which leaves the command's arrays to
# the process's end: under LeakSanitizer (tools/sanitize.sh) that is no leak
# of the library, whose own tests check leaks; buffer overflows and undefined
# behaviour are still caught here. Requests of terabytes must come back NULL
# (and be reported as such), not stop AddressSanitizer.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:allocator_may_return_null=1"
cd "$T" || exit 1

# c CODE PATTERN COMMAND-ARGS...: one case (COMMAND-ARGS go to gfi).
c() {
  local code=$1 pat=$2
  shift 2
  expect "$code" "$pat" -- timeout 60 "$GFI" "$@"
  if grep -v '^#' "$T/out" | grep -qiE '(^|[ ,])[-+]?(nan|inf)'; then
    bad "'gfi $*' printed NaN or inf: $(grep -v '^#' "$T/out" | head -2)"
  fi
}

# Inputs: good ones, and bad ones of every kind a file can be bad.
"$GFI" sample --model normal --n 200 --seed 1 >d1.txt
"$GFI" sample --model normal --dim 2 --n 200 --seed 1 >d2.txt
"$GFI" regress-sample --model normal --truth poly:0,1 --noise gauss:0.1 --n 200 --seed 1 >r1.txt
printf '0.1\n0.5\n' >q.txt
printf '0 0\n0.5 0.5\n' >q2.txt
printf '1\n2\nx3\n' >word.txt
printf '1\n2\nnan\n' >nan.txt
printf '1\n2\n1e400\n' >huge.txt
printf '1 2\n3\n' >ragged.txt
printf '# only a comment\n' >empty.txt
: >zero.txt
printf '1\n\0002\n' >nul.txt
printf '\223NUMPY\001\000\020\000{}' >bad.npy
printf 'not a table at all\n' >text.npy
head -c 100 /dev/urandom >random.bin
mkdir dir

# ---- every command: unknown, repeated and valueless options ----------------
for co in sample:n pdf:dim density:threads regress:threads regress-sample:n regress-mse:threads \
          regress-rates:threads flt-error:threads flt-complexity:threads mise:threads ropt:threads \
          rates:threads sweep:threads reproduce:threads attention:threads concentration:threads \
          correlation:threads; do
  cmd=${co%%:*} o=--${co#*:}
  c 2 "unknown option" "$cmd" --no-such-option 1
  c 2 "unexpected argument" "$cmd" stray
  c 2 "$o: given twice" "$cmd" "$o" 1 "$o" 2
  c 2 "$o: missing value" "$cmd" "$o"
  c 2 "$o" "$cmd" "$o" -1
done
c 2 "unknown command" no-such-command

# ---- sample, pdf: models ---------------------------------------------------
for m in t:1e-300 t:1e308 t:0 t:-1 t:nan t laplace:0,1e308 laplace:0,1e-300 laplace:1e200,1 laplace:0,-1 \
         cauchy:0,0 cauchy:1e300,1 uniform:2,1 uniform:0,1e-200 uniform:-1e308,1e308 beta:1e-9,1 beta:1,1e9 \
         beta:1 normal:cov=1e300 normal:cov=-1 normal:mean=1e200 normal:mean=1,2 'normal:cov=1,2' mw:0 mw:16 \
         mw:x foo '' normal:mean=1x; do
  c 2 "model" sample --model "$m" --n 5 --seed 1
  c 2 "model" pdf --model "$m" --at q.txt
done
c 2 "outside \[0.1, 1e+08\]" sample --model t:1e-300 --n 5
c 2 "scale b = 1e+308 is outside" sample --model laplace:0,1e308 --n 5
c 2 "covariance entry (1,1)" pdf --model normal:cov=1e300 --at q.txt
c 2 "--n: 2305843009213693952 is above the budget of 1e+15" sample --model normal --n 2305843009213693952
c 2 "--n: 1e18 is above the budget" sample --model normal --dim 3 --n 1e18
c 2 "--n" sample --model normal --n -5
c 2 "--n" sample --model normal --n 1.5
c 2 "--n" sample --model normal --n 1e30
c 2 "--dim" sample --model normal --dim 0 --n 5
c 2 "--seed" sample --model normal --n 5 --seed x
c 2 "--model" sample --n 5
c 1 "query file q2.txt:1:2" pdf --model normal --dim 1 --at q2.txt
c 1 "query file word.txt:3:1: not a number" pdf --model normal --at word.txt
c 1 "query file nan.txt:3:1: value is NaN" pdf --model normal --at nan.txt
c 1 "query file huge.txt:3:1" pdf --model normal --at huge.txt
c 1 "query file ragged.txt:2" pdf --model normal --dim 2 --at ragged.txt
c 1 "query file empty.txt: no data rows" pdf --model normal --at empty.txt
c 1 "query file zero.txt: no data rows" pdf --model normal --at zero.txt
c 1 "nul.txt:2: NUL byte" pdf --model normal --at nul.txt
c 1 "/dev/zero:1: NUL byte" pdf --model normal --at /dev/zero
c 1 "random.bin" pdf --model normal --at random.bin
c 1 "no-such-file.txt: cannot open" pdf --model normal --at no-such-file.txt
c 1 "dir" pdf --model normal --at dir
c 1 "bad.npy" pdf --model normal --at bad.npy
c 1 "text.npy" pdf --model normal --at text.npy

# ---- density ---------------------------------------------------------------
c 2 "R_1 \* x = 1e+300 \* " density --data d1.txt --phi pow:4 --R 1e300 --at q.txt
c 2 "--phi: only for --kernel fourier" density --data d1.txt --kernel gauss --bandwidth 0.3 --phi pow:4 --at q.txt
c 2 "--R: only for --kernel fourier" density --data d1.txt --kernel gauss --bandwidth 0.3 --R 2 --at q.txt
c 2 "--bandwidth: only for --kernel gauss" density --data d1.txt --bandwidth 0.3 --R 2 --at q.txt
c 2 "must be symmetric: entry (1,2) = 0.5 but (2,1) = 0.2" \
  density --data d2.txt --kernel gauss --bandwidth 1,0.5,0.2,1 --at q2.txt
c 2 "must be positive definite" density --data d2.txt --kernel gauss --bandwidth 1,2,2,1 --at q2.txt
c 2 "--bandwidth" density --data d1.txt --kernel gauss --bandwidth -1 --at q.txt
c 2 "--bandwidth" density --data d1.txt --kernel gauss --bandwidth 0 --at q.txt
c 2 "--bandwidth" density --data d2.txt --kernel gauss --bandwidth 1,2,3 --at q2.txt
c 2 "--bandwidth" density --data d1.txt --kernel gauss --bandwidth nan --at q.txt
c 2 "--kernel" density --data d1.txt --kernel epanechnikov --R 2 --at q.txt
c 2 "--R" density --data d1.txt --R 0 --at q.txt
c 2 "--R" density --data d1.txt --R -2 --at q.txt
c 2 "--R" density --data d1.txt --R inf --at q.txt
c 2 "--R" density --data d1.txt --R 1,2 --at q.txt
c 2 "--R" density --data d1.txt --R 2,x --at q.txt
c 2 "--R" density --data d1.txt --at q.txt
c 2 "given twice" density --data d1.txt --R 2 --R 3 --at q.txt
c 2 "--phi" density --data d1.txt --phi pow:9 --R 2 --at q.txt
c 2 "--phi" density --data d1.txt --phi pow:0 --R 2 --at q.txt
c 2 "--phi" density --data d1.txt --phi sinc --R 2 --at q.txt
c 2 "--phi" density --data d1.txt --phi pow:x --R 2 --at q.txt
c 2 "--method" density --data d1.txt --R 2 --at q.txt --method slow
c 2 "--tol" density --data d1.txt --R 2 --at q.txt --method fast --tol 2
c 2 "--tol" density --data d1.txt --R 2 --at q.txt --method fast --tol 0
c 1 "data file /dev/zero:1: NUL byte" density --data /dev/zero --phi pow:4 --R 2 --at q.txt
c 1 "data file word.txt:3:1" density --data word.txt --R 2 --at q.txt
c 1 "data file nan.txt:3:1" density --data nan.txt --R 2 --at q.txt
c 1 "data file empty.txt" density --data empty.txt --R 2 --at q.txt
c 1 "data file no-such-file.txt" density --data no-such-file.txt --R 2 --at q.txt
c 1 "query file word.txt:3:1" density --data d1.txt --R 2 --at word.txt
c 1 "query file /dev/zero" density --data d1.txt --R 2 --at /dev/zero
c 1 "q2.txt:1:2" density --data d1.txt --R 2 --at q2.txt
c 1 "weights file" density --data d1.txt --R 2 --at q.txt --weights q.txt
c 1 "weights file nan.txt" density --data d1.txt --R 2 --at q.txt --weights nan.txt
c 2 "--model" density --model t:1e-300 --n 10 --seed 1 --R 2 --at q.txt
c 2 "--n: .*above the budget" density --model normal --n 2305843009213693952 --seed 1 --R 2 --at q.txt
c 2 "--grid" density --data d1.txt --R 2 --grid 0:1:0
c 2 "--grid" density --data d1.txt --R 2 --grid 0:1:x
c 2 "--grid" density --data d1.txt --R 2 --grid 0:1:5 --at q.txt
c 1 "writing /dev/full" density --data d1.txt --R 2 --at q.txt --out /dev/full
c 1 "cannot write dir/" density --data d1.txt --R 2 --at q.txt --out dir/
c 1 "no-such-dir/x.npy" density --data d1.txt --R 2 --at q.txt --out no-such-dir/x.npy

# ---- regress, regress-sample -------------------------------------------------
c 2 "--phi: only for --kernel fourier" regress --data r1.txt --kernel gauss --bandwidth 0.3 --phi pow:4 --at q.txt
c 2 "R_1 \* x" regress --data r1.txt --R 1e300 --at q.txt
c 2 "must be symmetric" regress --model normal --dim 2 --truth poly:0,1 --n 50 --seed 1 --kernel gauss \
  --bandwidth 1,0.3,0.1,1 --at q2.txt
c 2 "--phi" regress --data r1.txt --phi pow:12 --R 2 --at q.txt
c 2 "--truth" regress --model normal --truth poly:1e308,1e308 --n 10 --seed 1 --R 2 --at q.txt
c 2 "--noise" regress --model normal --truth poly:0,1 --noise gauss:-1 --n 10 --seed 1 --R 2 --at q.txt
c 2 "--denom-tol" regress --data r1.txt --R 2 --at q.txt --denom-tol -1
c 1 "data file /dev/zero" regress --data /dev/zero --R 2 --at q.txt
c 1 "data file word.txt:3:1" regress --data word.txt --R 2 --at q.txt
c 1 "data file nan.txt:3:1" regress --data nan.txt --R 2 --at q.txt
c 1 "writing /dev/full" regress --data r1.txt --R 2 --at q.txt --out /dev/full
for t in 'poly:1e308,1e308' 'poly:' poly 'poly:1,x' 'poly:1;axis=3' 'polysum:1;axis=1' 'sin:1,2' sin:abc cosh \
         'poly:1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1' 'sin:1e300' 'polysum:0,-1e200'; do
  c 2 "--truth" regress-sample --model normal --truth "$t" --noise none --n 5 --seed 1
done
for nz in gauss:-1 gauss:x hetero:1 hetero:1,-1 gauss:1e300 laplace:1; do
  c 2 "--noise" regress-sample --model normal --truth poly:0,1 --noise "$nz" --n 5 --seed 1
done
c 1 "--truth: responses y: row 1, column 1 is infinite" \
  regress-sample --model normal:mean=1e90 --truth poly:0,0,0,1e100 --noise none --n 5 --seed 1
c 2 "--n: .*above the budget" regress-sample --model normal --truth poly:0,1 --n 2305843009213693952 --seed 1
c 2 "--model" regress-sample --model laplace:0,1e308 --truth poly:0,1 --n 5 --seed 1

# ---- regress-mse, regress-rates ------------------------------------------------
c 2 "--reps" regress-mse --model normal --truth poly:0,1 --n 50 --reps 1 --R 2 --points 3 --seed 1
c 2 "--truth" regress-mse --model normal --truth poly:1e308 --n 50 --reps 2 --R 2 --points 3 --seed 1
c 2 "--phi: only for --kernel fourier" regress-mse --model normal --truth poly:0,1 --n 50 --reps 2 \
  --kernel gauss --bandwidth 0.3 --phi pow:4 --points 3 --seed 1
c 2 "--model" regress-mse --model t:1e308 --truth poly:0,1 --n 50 --reps 2 --R 2 --points 3 --seed 1
c 2 "--rows" regress-rates --reps 3 --points 3 --rows no-such-row
c 2 "--size" regress-rates --size enormous
c 2 "--reps" regress-rates --reps 2 --rows thm2-1d
c 2 "3e+12 estimates to keep, above 2^40" regress-mse --model normal --truth poly:0,1 --n 100 --reps 1e12 --R 2 \
  --points 3 --seed 1
c 2 "1e+12 points to draw and sum" regress-mse --model normal --truth poly:0,1 --n 1e10 --reps 100 --R 2 --points 3 --seed 1

# ---- mise, ropt, rates ---------------------------------------------------------
c 1 "lower --resolution (now 1e+06)" mise --model normal --dim 1 --n 100 --phi pow:4 --R 2 --exact --resolution 1e6
c 1 "13920 x 13920 x 13920 nodes" mise --model laplace --dim 3 --n 100 --phi pow:4 --R 2 --exact --resolution 100
c 2 "--resolution" mise --model normal --n 100 --R 2 --exact --resolution 0
c 2 "--resolution" mise --model normal --n 100 --R 2 --exact --resolution -1
c 2 "--exact" mise --model normal --n 100 --R 2
c 2 "--exact" mise --model normal --n 100 --R 2 --exact --mc 5 --seed 1
c 2 "--seed" mise --model normal --n 100 --R 2 --mc 5
c 2 "--mc" mise --model normal --n 100 --R 2 --mc 1 --seed 1
c 2 "--n" mise --model normal --n 0 --R 2 --exact
c 2 "--R" mise --model normal --n 100 --R 0 --exact
c 2 "--R" mise --model normal --dim 2 --n 100 --R 1,2,3 --exact
c 2 "--phi" mise --model normal --n 100 --R 2 --phi pow:9 --exact
c 2 "--model" mise --model t:1e-300 --n 100 --R 2 --exact
c 2 "--model" mise --model normal:cov=1e300 --n 100 --R 2 --exact
c 2 "--ise" mise --model normal --n 100 --R 2 --mc 2 --seed 1 --ise magic
c 2 "--method" mise --model normal --n 100 --R 2 --exact --method fast
c 2 "--dim" mise --model normal --dim 0 --n 100 --R 2 --exact
c 2 "the grid ISE takes its box from the model" mise --model uniform --n 100 --R 2 --mc 2 --seed 1 --ise grid
c 2 "the grid ISE takes its box from the model" mise --model beta:2,2 --dim 2 --n 100 --R 2 --mc 2 --seed 1 --ise grid
c 2 "1e+14 points to draw and sum, above 1e+11" mise --model normal --n 1e12 --R 2 --mc 100 --seed 1
c 2 "1000000000000 replications of 100 points" mise --model normal --n 100 --R 2 --mc 1e12 --seed 1
c 1 "too large to build; lower --R or --resolution" mise --model normal --dim 3 --n 100 --R 50 --mc 2 --seed 1
c 2 "1e+14 Gaussian pairs to sum, above 1e+12" mise --model normal --n 1e6 --kernel gauss --bandwidth opt --mc 100 --seed 1
c 1 "too large to build; lower --R or --resolution" mise --model normal --dim 3 --n 100 --R 50 --mc 2 --seed 1 \
  --ise grid
c 2 "--model" ropt --model t:1e308 --n 100
c 2 "--phi" ropt --model normal --n 100 --phi pow:0
c 2 "--n" ropt --model normal --n 0
c 2 "--n" ropt --model normal --n x
c 2 "--dir" ropt --model normal --dim 2 --n 100 --dir 1,-1
c 2 "--theorems" rates --theorems 9
c 2 "--size" rates --size huge
c 2 "--model" rates --model t:1e-300
c 2 "--dim" rates --dim 7
c 2 "--phi1" rates --phi1 poly:x
c 2 "--phi1" rates --phi1 flattop:0.5
c 2 "--rho" correlation --rho 1
c 2 "--n" correlation --n 0.5

# ---- flt-error, flt-complexity (RPE and proposal specifications) ---------------------
for rpe in gauss gauss:s=0 gauss:s=-1 gauss:s=x gauss:q=1 box:v=0 local:v=1 'gauss:s=1;s=2' nosuch:s=1 '' \
           gauss:s=1e-308 gauss:s=1e308 'gbf:w=1;s=1e-308' 'mixture:w=1;s=1;mu=1e308' 'gbf:w=1e308;s=1' \
           local:v=1e30,k=8 'local:v=1,k=2,C=1e308' exp:s=1e-300 box:v=1e308; do
  c 2 "--rpe" flt-error --rpe "$rpe" --proposal gauss:tau=1 --L 4 --r 8 --trials 2
done
for pr in gauss:tau=0 gauss:tau=-1 t:nu=0 t:nu=x cauchy:tau=0 nosuch gauss:q=1 cauchy:tau=1e308 t:nu=1e-300 \
          t:nu=1e308 gauss:tau=1e-308; do
  c 2 "--proposal" flt-error --rpe gauss:s=1 --proposal "$pr" --L 4 --r 8 --trials 2
done
c 2 "--r" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --r 8,4 --trials 2
c 2 "--r" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --r 0 --trials 2
c 2 "--L" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 0 --r 8 --trials 2
c 2 "--trials" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --r 8 --trials 0
c 1 "positions: out of memory for 1000000000000 positions in 2 dimension" flt-error --rpe gauss:s=1 \
  --proposal gauss:tau=1 --ell 2 --grid 1000000x1000000 --r 8 --trials 2
c 1 "positions: out of memory for 1000000000000 positions" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 \
  --L 1e12 --r 8 --trials 2
c 2 "8e+12 feature evaluations, above 3e+11 .*; lower --trials, --r or --L" \
  flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --r 1e12 --trials 2
c 2 "lower --trials, --rmax or --L" flt-complexity --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --eps 0.5 \
  --delta 0.5 --trials 4 --rmax 1e12
c 2 "--ell" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --ell 9 --L 4 --r 8 --trials 2
c 2 "--features" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --r 8 --trials 2 --features odd
printf '1 0 1\n1e300 0 1\n' >mixw.txt
c 1 "mixw.txt: row 2, column 1: w = 1e+300 is outside" flt-error --rpe mixture:mixw.txt --proposal gauss:tau=1 --L 4 \
  --r 8 --trials 2
c 2 "s = 1e-308 is outside \[1e-10, 1e+10\]" flt-error --rpe gauss:s=1e-308 --proposal gauss:tau=1 --L 4 --r 8 --trials 2
c 2 "1e150 exceeds 1e+100" flt-error --rpe local:v=1e10,k=8,C=1e10 --ell 2 --proposal gauss:tau=1 --L 4 --r 8 --trials 2
c 1 "importance weight g(xi)/p(xi) overflowed" flt-error --rpe gauss:s=1e-10 --proposal t:nu=0.01,tau=1e-10 --L 4 \
  --r 8 --trials 2 --seed 1
c 1 "points file word.txt:3:1" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --points word.txt --L 3 --r 8 --trials 2
c 1 "/dev/zero" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --points /dev/zero --L 3 --r 8 --trials 2
c 2 "1.25e+15 feature evaluations, above 3e+11" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --cloud normal \
  --L 5000 --r 10000 --trials 10000
c 2 "1e+12 points to draw and sum, above 1e+11" concentration --n 1e9 --reps 1000
c 2 "--eps" flt-complexity --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --eps 0 --delta 0.5 --trials 4
c 2 "--delta" flt-complexity --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --eps 0.5 --delta 1 --trials 4
c 2 "--rpe" flt-complexity --rpe gauss:s=0 --proposal gauss:tau=1 --L 4 --eps 0.5 --delta 0.5 --trials 4

# ---- sweep, reproduce (options only; the sweep file's own checks are in their tests) -------
c 2 "--model" sweep --out sw.txt --model t:1e-300 --dims 1 --phis 4 --ns 100 --Rs 2 --reps 0 --seed 1
c 2 "--dims" sweep --out sw.txt --model normal --dims 9 --phis 4 --ns 100 --Rs 2 --reps 0 --seed 1
c 2 "--phis" sweep --out sw.txt --model normal --dims 1 --phis 0 --ns 100 --Rs 2 --reps 0 --seed 1
c 2 "--Rs" sweep --out sw.txt --model normal --dims 1 --phis 4 --ns 100 --Rs -2 --reps 0 --seed 1
c 2 "--reps" sweep --out sw.txt --model normal --dims 1 --phis 4 --ns 100 --Rs 2 --reps 1 --seed 1
c 2 "--seeds" reproduce --out rep --seeds 1
c 2 "--phi" reproduce --out rep --phi pow:99
c 2 "--model-1d" reproduce --out rep --model-1d t:1e-300
c 2 "--flt" reproduce --out rep --flt sometimes

# ---- attention, concentration ----------------------------------------------------------
printf '0.1 0.2\n0.3 0.4\n0.5 0.6\n' >Q.txt
c 1 "\-\-q /dev/zero:1: NUL byte" attention --q /dev/zero --k Q.txt --v Q.txt --R 2
c 1 "\-\-k/\-\-v: 3 and 2 rows" attention --q Q.txt --k Q.txt --v q.txt --R 2
c 1 "\-\-q word.txt:3:1: not a number" attention --q word.txt --k word.txt --v word.txt --R 2
c 2 "\-\-heads: 3 heads do not divide" attention --q Q.txt --k Q.txt --v Q.txt --R 2 --heads 3
c 2 "\-\-R: expected 1, 2 (per axis) or 2" attention --q Q.txt --k Q.txt --v Q.txt --R 1,2,3
c 2 "\-\-R: only for \-\-kind fourier" attention --q Q.txt --k Q.txt --v Q.txt --kind softmax --R 2
c 2 "\-\-kind" attention --q Q.txt --k Q.txt --v Q.txt --kind magic --R 2
c 1 "\-\-grad: cannot write dir/no/x.dQ" attention --q Q.txt --k Q.txt --v Q.txt --R 2 --grad dir/no/x
c 2 "\-\-model" concentration --model t:1e-300 --reps 100
c 2 "\-\-at" concentration --at 1,2,3,4,5,6,7,8,9 --reps 100
c 2 "\-\-l" concentration --l 9 --reps 100
c 2 "\-\-rho: a correlation must lie in (-1, 1), got 1" correlation --rho 1
c 2 "\-\-rho: entry 1 must be finite" correlation --rho nan
c 2 "\-\-n: a sample size must lie in 2..1e15" correlation --n 1e300
c 2 "\-\-l: kernel power 9" correlation --l 9

# ---- every command: a full standard output is an error naming it ----------------------
c 1 "writing /dev/full" sample --model normal --n 10 --seed 1 --out /dev/full
for args in "sample --model normal --n 10 --seed 1" "pdf --model normal --at q.txt" \
            "density --data d1.txt --R 2 --at q.txt" "regress --data r1.txt --R 2 --at q.txt" \
            "regress-sample --model normal --truth poly:0,1 --n 5 --seed 1" \
            "regress-mse --model normal --truth poly:0,1 --n 50 --reps 2 --R 2 --points 3 --seed 1" \
            "mise --model normal --n 100 --R 2 --exact" "mise --model normal --n 100 --R 2 --mc 2 --seed 1" \
            "flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --r 8 --trials 2" \
            "flt-complexity --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --eps 0.5 --delta 0.5 --trials 4 --rmax 64" \
            "regress-rates --reps 3 --points 3 --rows thm2-1d" "sample --help" "density --help" \
            "attention --q Q.txt --k Q.txt --v Q.txt --R 2" "concentration --n 50 --reps 100" \
            "correlation --rho 0.5 --n 100"; do
  # shellcheck disable=SC2086
  expect 1 "writing" -- sh -c "\"\$0\" $args >/dev/full" "$GFI"
done

# ---- reliability, second round (issue 24) -------------------------------------------
# npy NAME DICT-PREFIX DICT-REST BODY: a version 1.0 .npy whose dict is
# DICT-PREFIX, a NUL when DICT-REST is not '-' (then DICT-REST), padded with
# spaces and a newline to 64 bytes; BODY a printf format of the values
npy() {
  local pre=$2 rest=$3 body=$4 n
  [ "$rest" = - ] && rest="" && n=${#pre} || n=$((${#pre} + 1 + ${#rest}))
  local pad=$((64 - (10 + n + 1) % 64)) h
  h=$((n + pad + 1))
  { printf '\223NUMPY\001\000'; printf "\\$(printf %03o $((h % 256)))\\$(printf %03o $((h / 256)))"
    printf '%s' "$pre"; [ -n "$rest" ] && { printf '\000'; printf '%s' "$rest"; }
    printf "%${pad}s\n" ""; printf "$body"; } >"$1"
}
ONE='\000\000\000\000\000\000\360\077' # 1.0, little-endian
npy ok1.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }" - "$ONE$ONE"
npy zc.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000000, 0), }" - ""
npy zc5.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (5, 0), }" - ""
npy huge.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000000, 1), }" - "$ONE"
npy garb.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } x" - "$ONE$ONE"
npy garb2.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }}" - "$ONE$ONE"
npy nuld.npy "{'descr': '<f8" "', 'fortran_order': False, 'shape': (2,), }" "$ONE$ONE"
npy nulk.npy "{'descr': '<f8', 'fortran_order': False, 'sha" "pe': (2,), }" "$ONE$ONE"
c 0 "" density --data ok1.npy --R 1 --at q.txt # the helper writes a valid file
for f in zc zc5; do
  c 1 "$f.npy: shape ([0-9]*, 0): rows of zero columns hold no values" density --data $f.npy --R 1 --at q.txt
  c 1 "$f.npy: shape ([0-9]*, 0): rows of zero columns" ropt --select lscv --data $f.npy
  c 1 "$f.npy: shape ([0-9]*, 0): rows of zero columns" pdf --model normal --at $f.npy
  c 1 "$f.npy: shape ([0-9]*, 0): rows of zero columns" attention --q $f.npy --k Q.txt --v Q.txt --R 1
done
c 1 "huge.npy: truncated data: shape (1000000000000000000, 1) needs" ropt --select lscv --data huge.npy
for f in garb garb2; do
  c 1 "$f.npy: malformed header: byte [0-9]* after the dict" density --data $f.npy --R 1 --at q.txt
  c 1 "$f.npy: malformed header: byte [0-9]* after the dict" regress --data $f.npy --dim 1 --R 1 --at q.txt
  c 1 "$f.npy: malformed header: byte [0-9]* after the dict" pdf --model normal --at $f.npy
done
c 1 "nuld.npy: malformed header: 'descr' is not a plain quoted string" density --data nuld.npy --R 1 --at q.txt
c 1 "nuld.npy: malformed header: 'descr' is not a plain quoted string" pdf --model normal --at nuld.npy
c 1 "nulk.npy: malformed header: expected 'key': value" density --data nulk.npy --R 1 --at q.txt
for a in --version --help; do expect 1 "writing standard output" -- sh -c "\"\$0\" $a >/dev/full" "$GFI"; done

# non-finite results of finite inputs: a correct finite result, or an error naming the input
awk '{print 1e308, -1e308}' Q.txt >V308.txt
awk '{print 1e200 * $1, 1e200 * $2}' Q.txt >Q200.txt
for kind in "--R 2" "--R 0.5,3" "--kind softmax" "--kind softmax --causal" "--R 2 --l 3" "--R 2 --causal"; do
  for g in "" "--grad gr"; do
    # shellcheck disable=SC2086
    c 0 "" attention --q Q.txt --k Q.txt --v V308.txt $kind $g
  done
done
for v in 1e300 1e20 1e17; do
  c 2 "\-\-R: R_1 \* x = .* exceeds 2^52" attention --q Q.txt --k Q.txt --v Q.txt --R $v
done
c 1 "softmax logits scale q.k may overflow" attention --q Q200.txt --k Q200.txt --v Q.txt --kind softmax
c 1 "softmax logits scale q.k may overflow" attention --q Q.txt --k Q200.txt --v Q.txt --kind softmax --scale 1e300
awk '!/^#/ {print $1, 1e308}' r1.txt >y308.txt
awk '!/^#/ {print $1, -1e308, 1e308}' r1.txt >y308b.txt
for kern in "--R 2" "--R 2 --phi pow:3" "--kernel gauss --bandwidth 0.3" "--R 2 --method fast"; do
  # shellcheck disable=SC2086
  c 0 "" regress --data y308.txt $kern --grid -2:2:9
  # shellcheck disable=SC2086
  c 0 "" regress --data y308b.txt --dim 1 $kern --at q.txt
done
for cmd in "density --data d1.txt --R 1" "density --data d1.txt --kernel gauss --bandwidth 1" \
           "regress --data r1.txt --R 1" "regress --data r1.txt --kernel gauss --bandwidth 1"; do
  for g in -1e308:1e308:3 -1.7e308:1e308:2 -9e307:9e307:5; do
    # shellcheck disable=SC2086
    c 2 "\-\-grid: the span hi - lo of .* overflows a double" $cmd --grid $g
  done
done
awk '!/^#/ {print 1e308}' d1.txt >w308.txt
c 0 "" density --data d1.txt --R 1 --at q.txt --weights w308.txt
c 0 "" density --data d1.txt --kernel gauss --bandwidth 0.3 --at q.txt --weights w308.txt
printf '1e200\n-1e200\n3e199\n0\n' >g200.txt
c 1 "\-\-bandwidth scott: the data's covariance overflows a double" density --data g200.txt --kernel gauss --bandwidth scott --at q.txt
c 1 "\-\-bandwidth silverman: the data's covariance overflows" density --data g200.txt --kernel gauss --bandwidth silverman --at q.txt
c 0 "" density --data g200.txt --kernel gauss --bandwidth 1 --at q.txt

# degenerate data: the Scott and Silverman rules refuse it, like ns and lscv
for _ in $(seq 1 100); do echo 0.3; done >same.txt
for i in $(seq 1 50); do echo "$i $((2 * i + 1))"; done >line2.txt
for i in $(seq 1 50); do echo "$i 7"; done >flat2.txt
for f in same line2 flat2; do
  for r in scott silverman; do
    c 1 "\-\-bandwidth $r: the data do not spread along every axis" density --data $f.txt --kernel gauss --bandwidth $r --grid 0:1:3
  done
done
awk '{print $1, 2}' same.txt >samer.txt
c 1 "\-\-bandwidth scott: the data do not spread" regress --data samer.txt --kernel gauss --bandwidth scott --at q.txt

# budgets: every size and count checked before work starts, naming the option
c 2 "\-\-n: 10000000000 points x 1 dimension(s) = 1e+10 values, above the budget" sample --model normal --n 1e10
c 2 "\-\-n: 3000000000 points x 3 dimension(s)" sample --model normal --dim 3 --n 3e9
c 2 "\-\-n: 5000000000 pairs x 2 values" regress-sample --model normal --truth poly:0,1 --n 5e9
c 2 "\-\-grid: 1e+12 points in 2 dimension(s), above the budget" density --data d2.txt --R 1 --grid 0:1:1e6
c 2 "\-\-grid: .* above the budget" density --data d1.txt --R 1 --grid 0:1:1e10
c 2 "\-\-nscan: 1e15 is above the budget of 1e+05" ropt --select lscv --data d1.txt --nscan 1e15
c 2 "\-\-nscan: 200000 is above the budget" ropt --select lscv --data d1.txt --nscan 200000
SWG=(--model normal --dims 1 --phis 2 --Rs 1 --seed 1)
c 2 "\-\-reps: the point N = 1e+15, reps = 2 .* above the budget" sweep --out sw1.dat "${SWG[@]}" --ns 1e15 --reps 2
c 2 "\-\-reps: the point N = 1e+10, reps = 100" sweep --out sw1.dat "${SWG[@]}" --ns 1e10 --reps 100
c 2 "\-\-ns: the point N = 1e+10, reps = 100" sweep --out sw1.dat "${SWG[@]}" --ns 10,1e10 --reps 100
c 2 "\-\-reps: 1e+300 replications: at most 1e+09" sweep --out sw1.dat "${SWG[@]}" --ns 10 --reps 1e300
c 2 "\-\-reps: 1e+18 replications" sweep --out sw1.dat "${SWG[@]}" --ns 10 --reps 0,1e18
c 2 "\-\-ns: sizes must be integers" sweep --out sw1.dat "${SWG[@]}" --ns 1e300 --reps 0
[ ! -e sw1.dat ] && ok || bad "a refused sweep left its file"
for co in "mise --model normal --R 2 --exact --n" "mise --model normal --n 100 --R 2 --seed 1 --mc" \
          "concentration --reps" "concentration --n" "regress-mse --model normal --truth poly:0,1 --R 2 --points 3 --n 10 --reps" \
          "regress-rates --reps" "regress-rates --points" "attention --q Q.txt --k Q.txt --v Q.txt --R 2 --heads" \
          "flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 4 --r 8 --trials" "rates --per-decade" \
          "sample --model normal --n"; do
  # shellcheck disable=SC2086
  c 2 "above the budget of 1e+15" $co 1e16
done
c 2 "\-\-mc: .* above" mise --model normal --n 1000 --R 2 --seed 1 --mc 1e12
c 2 "\-\-reps: .* above 1e+11" concentration --reps 1e12

# sweep outputs that cannot be read back
c 1 "\-\-out /dev/full: not a regular file (a character device)" sweep --out /dev/full "${SWG[@]}" --ns 10 --reps 0
c 1 "\-\-out dir: not a regular file (a directory)" sweep --out dir "${SWG[@]}" --ns 10 --reps 0
c 1 "\-\-out /dev/null: not a regular file" sweep --out /dev/null "${SWG[@]}" --ns 10 --reps 0

# messages that name what the user must change
printf '0.1\r0.2\r0.3\r' >cr.txt
c 1 "data file cr.txt:1: a carriage return at byte 4 is followed by more text" density --data cr.txt --R 1 --at q.txt
c 1 "query file cr.txt:1: a carriage return" density --data d1.txt --R 1 --at cr.txt
c 1 "\-\-q cr.txt:1: a carriage return" attention --q cr.txt --k cr.txt --v cr.txt --R 1
printf '0.1\r\n0.2\r\n' >crlf.txt
c 0 "" density --data crlf.txt --R 1 --at q.txt
c 2 "\-\-tol: must be in \[1e-15, 1)" mise --model normal --n 1000 --R 2 --mc 3 --seed 1 --tol 1e-300 --method fast
c 2 "\-\-tol: must be in \[1e-15, 1)" mise --model normal --n 1000 --R 2 --mc 3 --seed 1 --tol 1e-16
c 1 "lower \-\-n (\-\-method direct sums every one of the N points" mise --model normal --n 1e8 --R 2 --mc 2 --seed 1 --method direct

# messages that name the option and its limit (each once named the wrong
# thing or nothing)
c 2 "\-\-n-density: 1000000000000000 is above the budget of 2^32" reproduce --quick --n-density 1e15 --out rq
c 2 "\-\-n-regress: 1000000000000000 is above the budget of 2^32" reproduce --quick --n-regress 1e15 --out rq
c 2 "\-\-points: 1000000000000000 is above the budget of 2^32" reproduce --quick --points 1e15 --out rq
awk 'BEGIN { srand(1); for (i = 0; i < 30; i++) { for (j = 0; j < 40; j++) printf "%s%.4f", j ? " " : "", rand(); print "" } }' >d40.txt
c 2 "\-\-method: fast needs D <= 3 .* the data have D = 40" density --data d40.txt --dim 40 --method fast --R 1 --at d40.txt
c 2 "\-\-method: fast needs D <= 3 .* the data have D = 4" density --model normal --dim 4 --n 50 --seed 1 --method fast --R 1 --grid 0:1:2
awk '{ print $1, $2 }' d40.txt >r40.txt
c 2 "\-\-method: fast needs D <= 3 .* D = 5" regress --model normal --truth sin --dim 5 --n 50 --seed 1 --method fast --R 1 --grid 0:1:2
c 2 "\-\-nmax: N = 100..1000 at 1 per decade gives 2 sample size(s); the rate fit needs at least 3" rates --nmax 1e3
c 2 "\-\-nmax: 1e+300 is above the largest sample size, 1e15" rates --nmax 1e300
c 2 "\-\-fit-decades: 2 sample size(s) in the fitted last 1 decade(s)" rates --nmax 1e4 --fit-decades 1 --model normal
c 2 "\-\-R: the product of the radii, 10^308.0, is above 1e300" mise --model normal --n 100 --R 1e308 --exact
c 2 "\-\-R: the product of the radii, 10^320.0, is above 1e300" mise --model normal:cov=1,0.5,0.5,1 --dim 2 --n 100 --R 1e160 --exact
c 2 "\-\-R: the product of the radii" mise --model normal --n 100 --R 1e301 --mc 2 --seed 1
c 2 "\-\-trials: 1e+15 trials x r values x metrics = .* above the budget" flt-complexity --rpe gauss:s=1 --proposal gauss:tau=1 --L 2 --eps 0.1 --delta 0.1 --trials 1e15
c 2 "\-\-trials: 1e+10 trials x r values x metrics = .* above the budget" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 2 --r 8 --trials 1e10
c 2 "\-\-trials: 1000000000000000 trials x 8 features" flt-error --rpe gauss:s=1 --proposal gauss:tau=1 --L 2 --r 8 --trials 1e15
c 2 "\-\-n: 1e+15 points x D = 1e+15 values, above the budget" density --model normal --n 1e15 --seed 1 --R 1 --at q.txt
c 2 "\-\-n: 1e+10 points x (D + 1) columns = 2e+10 values" regress --model normal --truth sin --n 1e10 --seed 1 --R 1 --at q.txt
c 2 "\-\-points: 1e+15 points x D = 1e+15 values, above the budget" regress-mse --model normal --truth sin --n 100 --reps 2 --R 1 --points 1e15
mkdir -p adir bdir.npy
c 1 "data file adir: is a directory, not a file" density --data adir --R 1 --at q.txt
c 1 "data file bdir.npy: is a directory, not a file" density --data bdir.npy --R 1 --at q.txt
c 1 "query file adir: is a directory, not a file" pdf --model normal --at adir
c 1 "data file adir: is a directory, not a file" regress --data adir --R 1 --at q.txt
c 2 "\-\-npy-table: goes with \-\-out FILE.npy, got \-\-out t.txt" pdf --model normal --at q.txt --npy-table --out t.txt
c 2 "\-\-npy-table: goes with \-\-out FILE.npy, got no \-\-out" density --data d1.txt --R 1 --at q.txt --npy-table
c 2 "\-\-npy-table: goes with \-\-out FILE.npy" regress --data r1.txt --R 1 --at q.txt --npy-table --out t.txt
for co in "sample --model normal --n 3 --out" "pdf --model normal --at q.txt --out" "density --data d1.txt --R 1 --at q.txt --out" \
          "regress --data r1.txt --R 1 --at q.txt --out" "regress-sample --model normal --truth sin --n 3 --out" \
          "attention --q Q.txt --k Q.txt --v Q.txt --R 2 --out" "attention --q Q.txt --k Q.txt --v Q.txt --R 2 --grad" \
          "sweep ${SWG[*]} --ns 10 --reps 0 --out" "rates --out" "reproduce --quick --out" "density --R 1 --at q.txt --data" \
          "pdf --model normal --at"; do
  # shellcheck disable=SC2086
  c 2 "\-\-[a-z]*: the \(file\|folder\) name is empty" $co ''
done
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 -c 'import numpy as np; np.save("Q4.npy", np.zeros((1, 1, 4, 2))); np.save("K0.npy", np.zeros((1, 1, 0, 2)))'
  c 1 "\-\-k K0.npy: the axis Lk has length 0" attention --q Q4.npy --k K0.npy --v K0.npy --R 2 --out H4.npy
  c 1 "\-\-q K0.npy: the axis Lq has length 0" attention --q K0.npy --k Q4.npy --v Q4.npy --R 2 --out H4.npy
fi

finish bad-input
