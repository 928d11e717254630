# FourierFormer Figure 2 (gfi reproduce): Nadaraya-Watson regression of
# seed 1, prediction against truth along the slice x2 = 0 and at the test
# points of the default box. gfi reproduce passes: dir, design, truth, noise,
# n, l, rfix, rstar, rdd (the leave-one-out CV radius of seed 1), box.
if (!exists("dir")) dir = "results"
if (!exists("design")) design = "normal:cov=1,0.5,0.5,1"
if (!exists("truth")) truth = "poly:0,1,-0.5,0.2"
if (!exists("noise")) noise = "gauss:0.5"
if (!exists("n")) n = 90000
if (!exists("l")) l = 4
if (!exists("rfix")) rfix = 2
if (!exists("rstar")) rstar = 0
if (!exists("rdd")) rdd = 0
if (!exists("box")) box = 2
fs = dir."/fig2_slice.dat"
fp = dir."/fig2_points.dat"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,620 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 14in,6.2in enhanced font "Sans,10" }
  set output dir."/fig2.".fmt
  set multiplot layout 1,2 title sprintf("Figure 2: Fourier Nadaraya-Watson, phi(z) = z^%d, N = %d pairs, design %s, truth %s, noise %s (seed 1)", l, n, design, truth, noise) noenhanced
  set grid
  set key top left box opaque
  set title "along the slice x_2 = 0"
  set xlabel "x_1"
  set ylabel "f(x_1, 0)"
  set xrange [-box:box]
  plot fs u 1:3 w l lw 4 lc rgb "black" t "truth", \
       fs u 1:4 w l lw 2 dt 2 lc rgb "#1f77b4" t sprintf("fixed R = %g", rfix), \
       fs u 1:5 w l lw 2 lc rgb "#d62728" t sprintf("oracle R* = %.3g", rstar), \
       fs u 1:6 w l lw 2 dt 4 lc rgb "#2ca02c" t sprintf("data-driven (LOO-CV) R = %.3g", rdd)
  set title sprintf("at the test points uniform in [-%g, %g]^2", box, box)
  set xlabel "truth f(x)"
  set ylabel "prediction"
  set autoscale x
  set size ratio -1
  plot fp u 3:4 w p pt 7 ps 0.45 lc rgb "#1f77b4" t sprintf("fixed R = %g", rfix), \
       fp u 3:5 w p pt 7 ps 0.45 lc rgb "#d62728" t sprintf("oracle R* = %.3g", rstar), \
       fp u 3:6 w p pt 6 ps 0.45 lc rgb "#2ca02c" t sprintf("data-driven (LOO-CV) R = %.3g", rdd), \
       x w l lw 1.5 lc rgb "black" t "prediction = truth"
  unset multiplot
  unset output
  reset
}
