# FourierFormer Figure 1A (gfi reproduce): the 1-D density, truth against the
# estimates of seed 1 at the fixed, the oracle and the data-driven (LSCV)
# radius, and their errors.
# gfi reproduce passes: dir, model, n, l, rfix, rstar, rdd, box. By hand:
#   gnuplot -e "dir='results'; model='normal'; n=100000; l=4; rfix=2; rstar=7.9; rdd=7.2; box=3" plots/fourierformer_fig1a.gp
if (!exists("dir")) dir = "results"
if (!exists("model")) model = "normal"
if (!exists("n")) n = 100000
if (!exists("l")) l = 4
if (!exists("rfix")) rfix = 2
if (!exists("rstar")) rstar = 0
if (!exists("rdd")) rdd = 0
if (!exists("box")) box = 3
f = dir."/fig1a_curve.dat"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1000,850 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 10in,8.5in enhanced font "Sans,10" }
  set output dir."/fig1a.".fmt
  set multiplot layout 2,1 title sprintf("Figure 1A: density of %s from N = %d points, phi(z) = z^%d (seed 1)", model, n, l) noenhanced
  set grid
  set xrange [-box:box]
  set xlabel "x"
  set ylabel "density"
  set key top right box opaque
  set title "truth and estimates"
  plot f u 1:2 w l lw 4 lc rgb "black" t "truth", \
       f u 1:3 w l lw 2 dt 2 lc rgb "#1f77b4" t sprintf("fixed R = %g", rfix), \
       f u 1:4 w l lw 2 lc rgb "#d62728" t sprintf("oracle R* = %.3g", rstar), \
       f u 1:5 w l lw 2 dt 4 lc rgb "#2ca02c" t sprintf("data-driven (LSCV) R = %.3g", rdd)
  set title "estimate - truth"
  set ylabel "error"
  set format y "%.1e"
  plot f u 1:($3 - $2) w l lw 2 dt 2 lc rgb "#1f77b4" t sprintf("fixed R = %g", rfix), \
       f u 1:($4 - $2) w l lw 2 lc rgb "#d62728" t sprintf("oracle R* = %.3g", rstar), \
       f u 1:($5 - $2) w l lw 2 dt 4 lc rgb "#2ca02c" t sprintf("data-driven (LSCV) R = %.3g", rdd), \
       0 w l lc rgb "black" notitle
  unset multiplot
  unset output
  reset
}
