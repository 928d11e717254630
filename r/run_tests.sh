#!/bin/sh
# The R package's test (meson test r-package): installs r/ into a temporary
# library against the build tree's libgfi (R CMD INSTALL with GFI_BUILD_DIR),
# then runs r/tests/test_gfi.R (the CLI's bits with GFI_CLI, ks in the same
# run, plain R sums, bad input) and the R blocks of docs/r.md as written.
#   run_tests.sh SOURCE_ROOT BUILD_ROOT
# Exit 77 (skipped) when R is not installed.
set -eu
src=$(cd "$1" && pwd)
bld=$(cd "$2" && pwd)
if ! command -v Rscript >/dev/null 2>&1 || ! command -v R >/dev/null 2>&1; then
  echo "skip: R is not installed (Debian: apt-get install r-base-dev r-cran-ks; README's set-up does it)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# a copy of the package: R CMD INSTALL builds in the folder it is given
cp -R "$src/r" "$work/gfi"
rm -f "$work/gfi/src/Makevars" "$work/gfi/src/"*.o "$work/gfi/src/"*.so
mkdir "$work/lib"
# A sanitizer build: R runs with the ASan runtime preloaded (GFI_R_PRELOAD,
# from r/meson.build); the compiler and the CLI without it. The install's
# load test is skipped there (R CMD INSTALL runs without the runtime).
preload=${GFI_R_PRELOAD:-}
testload=""
[ -n "$preload" ] && testload="--no-test-load"
if ! GFI_BUILD_DIR="$bld" R CMD INSTALL --no-docs --no-multiarch $testload -l "$work/lib" "$work/gfi" >"$work/install.log" 2>&1; then
  cat "$work/install.log"
  echo "FAIL: R CMD INSTALL"
  exit 1
fi
export R_LIBS="$work/lib"
cd "$work"
rscript() {
  if [ -n "$preload" ]; then LD_PRELOAD="$preload" Rscript "$@"; else Rscript "$@"; fi
}
rscript "$src/r/tests/test_gfi.R"
# Ctrl-C: SIGINT to an R process in a long direct sum stops it with a
# gfi_interrupt condition (r/tools/interrupt_child.R says what it checks)
echo "--- interrupt"
if [ -n "$preload" ]; then
  env LD_PRELOAD="$preload" Rscript "$src/r/tools/interrupt_child.R" > interrupt.out 2>&1 &
else
  env Rscript "$src/r/tools/interrupt_child.R" > interrupt.out 2>&1 &
fi
pid=$!
i=0
# wait for the sum's first progress line (or the child's end), not a time
while ! grep -q "^gfi: density" interrupt.out 2>/dev/null && kill -0 $pid 2>/dev/null; do sleep 0.1; done
kill -INT $pid 2>/dev/null
wait $pid || true
cat interrupt.out
grep -q "^interrupted:" interrupt.out || { echo "FAIL: the interrupt did not stop the sum"; exit 1; }
# docs/r.md: every ```r block, in order, in one R session (not again under a
# sanitizer: the blocks call what test_gfi.R has checked there, at larger N)
if [ -z "$preload" ]; then
  awk '/^```r$/ { inb = 1; next } /^```/ { inb = 0; next } inb { print }' "$src/docs/r.md" > "$work/docs.R"
  if [ ! -s "$work/docs.R" ]; then
    echo "FAIL: no \`\`\`r block in docs/r.md"
    exit 1
  fi
  echo "--- docs/r.md"
  rscript -e 'pdf(NULL)' -e 'source("docs.R", echo = TRUE, max.deparse.length = Inf)'
fi
# README.md's R block, on the files its commands write (plain build only, as docs/r.md)
if [ -n "${GFI_CLI:-}" ] && [ -z "$preload" ]; then
  echo "--- README.md"
  "$GFI_CLI" sample --model mw:6 --n 20000 --seed 1 > x.txt
  "$GFI_CLI" regress-sample --model normal --truth sin --noise gauss:0.3 --dim 1 --n 4000 --seed 1 > xy.txt
  awk '/^```r$/ { inb = 1; next } /^```/ { inb = 0; next } inb { print }' "$src/README.md" > readme.R
  [ -s readme.R ] || { echo "FAIL: no \`\`\`r block in README.md"; exit 1; }
  rscript -e 'source("readme.R", echo = TRUE)' -e 'stopifnot(length(p) == 7, is.finite(f), m > 0)'
fi
echo "r-package: all passed"
