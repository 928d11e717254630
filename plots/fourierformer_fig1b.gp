# FourierFormer Figure 1B (gfi reproduce): the 2-D density as heat maps,
# truth and the estimates of seed 1 at the fixed, the oracle and the
# data-driven (LSCV) radius, on one colour scale. gfi reproduce passes: dir,
# model, n, l, rfix, rstar, rdd, box.
if (!exists("dir")) dir = "results"
if (!exists("model")) model = "normal:cov=1,0.5,0.5,1"
if (!exists("n")) n = 100000
if (!exists("l")) l = 4
if (!exists("rfix")) rfix = 2
if (!exists("rstar")) rstar = 0
if (!exists("rdd")) rdd = 0
if (!exists("box")) box = 3
f = dir."/fig1b_grid.dat"
stats f u 3 nooutput
top = STATS_max * 1.05
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1200,1100 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 12in,11in enhanced font "Sans,10" }
  set output dir."/fig1b.".fmt
  set multiplot layout 2,2 title sprintf("Figure 1B: density of %s from N = %d points, phi(z) = z^%d (seed 1); white contours at 10, 30, 50, 70% of the peak", model, n, l) noenhanced
  set view map
  set size ratio -1
  set xlabel "x_1"
  set ylabel "x_2"
  set xrange [-box:box]
  set yrange [-box:box]
  set cbrange [*:top]
  set palette rgbformulae 33,13,10
  set contour base
  set cntrparam levels discrete 0.1*top, 0.3*top, 0.5*top, 0.7*top
  unset clabel
  set style textbox opaque
  do for [c = 3:6] {
    set title (c == 3 ? "truth" : (c == 4 ? sprintf("estimate, fixed R = %g", rfix) : (c == 5 ? sprintf("estimate, oracle R* = %.3g", rstar) : sprintf("estimate, data-driven (LSCV) R = %.3g", rdd))))
    splot f u 1:2:c w pm3d notitle, f u 1:2:c nosurface w l lc rgb "white" lw 0.8 notitle
  }
  unset multiplot
  unset output
  reset
}
