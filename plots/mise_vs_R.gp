# MISE against R at fixed N: exact curves (with bias^2 and variance for l = 4)
# and Monte-Carlo points with 2-se error bars.
# Usage: gnuplot -e "dir='results'" plots/mise_vs_R.gp
if (!exists("dir")) dir = "results"
f = dir."/mise_vs_R.dat"
g = dir."/mise_vs_R_mc.dat"
model = system("sed -n 's/^# model: \\([^ ]*\\).*/\\1/p' ".f)
n = system("sed -n 's/^# n: //p' ".f)
reps = system("sed -n 's/^# method: Monte Carlo, \\([0-9]*\\).*/\\1/p' ".g)
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1000,650 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 10in,6.5in enhanced font "Sans,10" }
  set output dir."/mise_vs_R.".fmt
  set title "MISE against the radius R: truth ".model.", N = ".n." (exact curves; Monte Carlo, ".reps." replications, ±2 se)"
  set logscale xy
  set format y "10^{%L}"
  set xlabel "R"
  set ylabel "MISE"
  set key bottom left box opaque
  set grid
  set xrange [0.3:30]
  set yrange [1e-5:1]
  plot f u 1:2 w l lw 2 lc rgb "#1f77b4" t "l = 1 (Dirichlet)", \
       f u 1:5 w l lw 2 lc rgb "#2ca02c" t "l = 2 (Fejér)", \
       f u 1:8 w l lw 3 lc rgb "#d62728" t "l = 4 (Jackson)", \
       f u 1:9 w l lw 1.5 dt 2 lc rgb "#d62728" t "l = 4: integrated bias^2", \
       f u 1:10 w l lw 1.5 dt 4 lc rgb "#d62728" t "l = 4: integrated variance", \
       g i 0 u 2:3:(2*$4) w yerrorbars pt 7 ps 0.8 lc rgb "#1f77b4" t "Monte Carlo, l = 1", \
       g i 1 u 2:3:(2*$4) w yerrorbars pt 5 ps 0.8 lc rgb "#2ca02c" t "Monte Carlo, l = 2", \
       g i 2 u 2:3:(2*$4) w yerrorbars pt 9 ps 1.0 lc rgb "#d62728" t "Monte Carlo, l = 4"
  unset output
  reset
}
