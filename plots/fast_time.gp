# The fast route's cost against N (tools/bench.sh fast writes the tables):
# left, a density on a 1-D grid of 1024 points: gfi direct (subset-scaled),
# gfi fast and KDEpy's FFTKDE (computation alone); right, the Monte-Carlo
# MISE (gfi mise --mc, whole process) through the fast and the direct route.
# Usage: gnuplot -e "dir='build/bench'" plots/fast_time.gp
if (!exists("dir")) dir = "build/bench"
f = dir."/fast_scaling.dat"
g = dir."/fast_mise.dat"
have_g = system("test -r ".g." && echo 1 || echo 0") + 0
slope(file, key) = system("sed -n 's/^# slope.* ".key." \\([-0-9.naN]*\\).*/\\1/p' ".file)
reps = system("sed -n 's/.*--mc \\([0-9]*\\).*/\\1/p' ".g." 2>/dev/null | head -1")
set datafile missing "nan"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1500,650 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 15in,6.5in enhanced font "Sans,10" }
  set output dir."/fast_time.".fmt
  set multiplot layout 1,2 title "gfi's band-limited fast route: time against N (phi = z^4, tol 1e-10)"
  set logscale xy
  set format x "10^{%L}"
  set format y "10^{%L}"
  set xlabel "N (data points)"
  set ylabel "seconds"
  set key top left box opaque
  set grid
  set title "Density on a 1-D grid of 1024 points (R fixed)"
  plot f u 1:3 w lp pt 5 ps 1 lw 2 lc rgb "#1f77b4" t sprintf("gfi direct (slope %s)", slope(f, "direct")), \
       f u 1:2 w lp pt 7 ps 1 lw 2 lc rgb "#d62728" t sprintf("gfi fast (slope %s for N >= 10^5)", slope(f, "fast")), \
       f u 1:4 w lp pt 9 ps 1 lw 2 lc rgb "#2ca02c" t sprintf("KDEpy FFTKDE, Gaussian, binned (slope %s)", slope(f, "kdepy"))
  set title sprintf("Monte-Carlo MISE, %s replications, whole process (R = R*(N))", reps)
  if (have_g) {
    plot g u 1:9 w lp pt 5 ps 1 lw 2 lc rgb "#1f77b4" t sprintf("gfi mise --method direct (slope %s)", slope(g, "direct")), \
         g u 1:3 w lp pt 7 ps 1 lw 2 lc rgb "#d62728" t sprintf("gfi mise --method fast (slope %s for N >= 10^5)", slope(g, "fast"))
  } else {
    unset logscale
    set xrange [0:1]
    set yrange [0:1]
    set label 1 "no fast_mise.dat" at 0.5,0.5 center
    plot NaN notitle
    unset label 1
  }
  unset multiplot
  unset output
  reset
  set datafile missing "nan"
}
