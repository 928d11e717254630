# The fast route's error against the requested tolerance (bench_fast's tol
# part): max |fast - direct| / max |direct| at N = 10^5, M = 10^3 scattered
# queries, D = 1 and 2, with the error bound each evaluation reported; the
# diagonal is error = tol.
# Usage: gnuplot -e "dir='build/bench'" plots/fast_tol.gp
if (!exists("dir")) dir = "build/bench"
f = dir."/fast_tol.dat"
set datafile missing "nan"
floor_err = 1e-17
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1000,700 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 10in,7in enhanced font "Sans,10" }
  set output dir."/fast_tol.".fmt
  set title "Fast route: error against the requested tolerance (phi = z^4, N(0, I) data; errors of 0 drawn at 10^{-17})"
  set logscale xy
  set format x "10^{%L}"
  set format y "10^{%L}"
  set xlabel "requested tol"
  set ylabel "max |fast - direct| / max |direct|"
  set xrange [5e-14:2e-3]
  set yrange [1e-17:1e-2]
  set key top right box opaque
  set grid
  plot x w l lw 1.5 dt 2 lc rgb "#555555" t "error = tol", \
       f i 0 u 2:($3 > floor_err ? $3 : floor_err) w lp pt 7 ps 1.2 lw 2 lc rgb "#d62728" t "D = 1", \
       f i 1 u 2:($3 > floor_err ? $3 : floor_err) w lp pt 5 ps 1.2 lw 2 lc rgb "#1f77b4" t "D = 2", \
       f i 0 u 2:6 w l lw 1.5 dt 3 lc rgb "#d62728" t "D = 1: error bound the route reported", \
       f i 1 u 2:6 w l lw 1.5 dt 3 lc rgb "#1f77b4" t "D = 2: error bound the route reported"
  unset output
}
