# Theorem 2 at fixed points (gfi regress-rates --out DIR with pointwise rows,
# e.g. --rows thm2-1d-pt). Usage:
#   gnuplot -e "dir='results'" plots/regress_points.gp
# Left: the constant C(x) = MSE(N, x) / claimed rate(N) (geometric mean over N)
# against 1/p(x), log-log, one curve per pointwise row, with the slopes 1
# (variance-dominated MSE, ~ 1/p(x)) and 2 (Theorem 2's 1/p(x)^2) drawn through
# the point of highest density. Right: the observed rate per point with its 95%
# interval against the claimed one.
if (!exists("dir")) dir = "results"
f = dir."/regress_points.dat"
# the pointwise rows' base names (NAME of NAME@x), in order of appearance
bases = system("awk '!/^#/ && NF && $1 ~ /@/ { b = $1; sub(/@.*/, \"\", b); if (!(b in s)) { s[b] = 1; printf \"%s \", b } }' ".f)
nb = words(bases)
sel(b) = sprintf("< awk '!/^#/ && NF && $1 ~ /^%s@/' '%s'", b, f)
# anchor of the reference lines: the row's point with the largest p(x)
anchor(b) = system(sprintf("awk '!/^#/ && NF && $1 ~ /^%s@/ && $3 > m { m = $3; c = $9 } END { printf \"%%.17g %%.17g\", 1 / m, c }' '%s'", b, f))
gam(b) = system(sprintf("sed -n 's/^# gamma %s: .*gamma = \\([^(]*\\) (.*/\\1/p' '%s' | head -1", b, f))
colors = "#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #e377c2 #17becf"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1200,500 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 12.0,5.0 enhanced font "Sans,9" }
  set output dir."/regress_points.".fmt
  set multiplot layout 1,2 title "Theorem 2 at fixed points: the constant against 1/p(x), and the rate per point" font ",12"
  set logscale xy
  set format y "10^{%L}"
  set xlabel "1/p(x)"
  set ylabel "C(x) = MSE(N, x) / N^{claimed}"
  set grid
  set key top left box opaque font ",9" noenhanced
  set title "C(x) against 1/p(x) (log-log): the bound allows slope <= 2"
  plot for [i=1:nb] sel(word(bases, i)) u (1/$3):9 w lp pt 7 ps 1 lw 2 lc rgb word(colors, i) \
         t sprintf("%s (gamma = %s)", word(bases, i), gam(word(bases, i))), \
       for [i=1:nb] (real(word(anchor(word(bases, i)), 2)) * (x * 0 + x / real(word(anchor(word(bases, i)), 1)))) \
         w l dt 2 lc rgb "#7f7f7f" t (i == 1 ? "slope 1 (C ~ 1/p)" : ""), \
       for [i=1:nb] (real(word(anchor(word(bases, i)), 2)) * (x / real(word(anchor(word(bases, i)), 1)))**2) \
         w l dt 3 lw 1.5 lc rgb "#000000" t (i == 1 ? "slope 2 (C ~ 1/p^2, Theorem 2)" : "")
  unset logscale
  set format y "%g"
  set xlabel "x"
  set ylabel "slope of log MSE(x) on log N"
  set title "observed rate per point (95% interval) and the claimed one"
  set key bottom right
  set offsets 0.3, 0.3, 0.1, 0.1
  plot for [i=1:nb] sel(word(bases, i)) u 2:6:7:8 w yerrorbars pt 7 ps 1 lc rgb word(colors, i) t word(bases, i), \
       for [i=1:nb] sel(word(bases, i)) u 2:5 w l dt 2 lw 2 lc rgb word(colors, i) t "claimed"
  unset offsets
  unset multiplot
  unset output
}
