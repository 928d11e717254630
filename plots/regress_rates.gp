# Regression rate checks (gfi regress-rates --out DIR). Usage:
#   gnuplot -e "dir='results'" plots/regress_rates.gp
# One panel per row of the table: the Monte-Carlo MSE (integrated, or at the
# point x for the pointwise rows NAME@x) with its
# standard error, its bias^2 and variance parts, the fitted power law and a
# line with the claimed slope through the fit at the smallest N.
if (!exists("dir")) dir = "results"
f = dir."/regress_rates.dat"
stats f u 1 nooutput
nb = STATS_blocks
size = system("sed -n 's/^# size: \\(.*\\)/\\1/p' ".f." | head -1")
# the '# row' comment of block i, split before 'observed'
title(i) = system(sprintf("sed -n 's/^# row //p' '%s' | sed -n '%dp' | sed 's/; observed/\\nobserved/'", f, i))
cols = nb > 2 ? 3 : nb
rows = int((nb + cols - 1) / cols)

do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 560*cols,470*rows enhanced font "Sans,10" } \
  else { set terminal pdfcairo size (5.6*cols),(4.7*rows) enhanced font "Sans,9" }
  set output dir."/regress_rates.".fmt
  set multiplot layout rows,cols title "Nadaraya-Watson rate checks: MSE vs N, integrated (rows NAME@x: at the point x) (".size.")" font ",12"
  set logscale xy
  set format y "10^{%L}"
  set xlabel "N"
  set ylabel "MSE"
  set grid
  set key bottom left box opaque font ",9"
  do for [i=0:nb-1] {
    set title title(i+1) font ",10" noenhanced
    plot f index i u 1:3:4 w yerrorbars pt 7 ps 0.8 lc rgb "black" t "MSE (Monte Carlo, ± s.e.)", \
         f index i u 1:5 w lp pt 4 ps 0.7 dt 3 lc rgb "#1f77b4" t "bias^2", \
         f index i u 1:6 w lp pt 6 ps 0.7 dt 3 lc rgb "#2ca02c" t "variance", \
         f index i u 1:8 w l lw 2 lc rgb "#d62728" t "fit", \
         f index i u 1:9 w l lw 2 dt 2 lc rgb "#9467bd" t "claimed slope"
  }
  unset multiplot
  unset output
}
