# FourierFormer's correlation claim (gfi correlation --out DIR). Usage:
#   gnuplot -e "dir='results'" plots/correlation.gp
# Left: MISE* against the correlation rho of the truth N(0, [[1, rho], [rho, 1]])
# for the isotropic Fourier estimator (one radius), the Gaussian KDE with
# H = h^2 I and the Gaussian KDE with a full H, each at its MISE-optimal
# parameters, one colour per N. Right: the first two over the full-H MISE.
if (!exists("dir")) dir = "results"
f = dir."/correlation.dat"
kern = system("sed -n 's/^# fourier: phi = \\(z^[0-9]*\\).*/\\1/p' ".f." | head -1")
ns = system("awk '!/^#/ && NF { if (!s[$2]++) printf \"%s \", $2 }' ".f)
nn = words(ns)  # rows are rho-major: the rows of the i-th N are every nn-th from row i - 1
colors = "#1f77b4 #d62728 #2ca02c #9467bd #8c564b #ff7f0e"
# the Fourier and the h^2 I Gaussian curves nearly coincide: the Fourier
# curve is a wide translucent band, the Gaussian ones thin lines on top
light(c) = "#A0".c[2:*]
# x = -log10(1 - rho): 0, 0.5, 0.9, 0.99 evenly spaced by their distance from 1
x(r) = -log10(1 - r)
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,560 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 14in,5.6in enhanced font "Sans,9" }
  set output dir."/correlation.".fmt
  set multiplot layout 1,2 title "Does the Fourier estimator need no covariance tuning? Exact MISE at each estimator's optimal parameters, truth N(0, [[1, rho], [rho, 1]])" font ",12"
  set xtics ("0" 0, "0.5" x(0.5), "0.9" x(0.9), "0.99" x(0.99), "0.999" x(0.999))
  set xrange [-0.1:*]
  set rmargin 3
  set offsets 0, 0.1, 0, 0
  set xlabel "rho"
  set grid
  set title "MISE*: Fourier, one radius (".kern.", wide band), Gaussian h^2 I (dashed), Gaussian full H (dotted)"
  set logscale y
  set format y "10^{%L}"
  set ylabel "MISE*"
  set key top left box opaque
  plot for [i = 1:words(ns)] f every nn::(i-1) u (x($1)):4 w l lw 7 lc rgb light(word(colors, i)) t "N = ".word(ns, i), \
       for [i = 1:words(ns)] f every nn::(i-1) u (x($1)):6 w lp pt 6 ps 1 lw 1.5 dt 2 lc rgb word(colors, i) notitle, \
       for [i = 1:words(ns)] f every nn::(i-1) u (x($1)):10 w lp pt 4 ps 0.8 lw 1.5 dt 3 lc rgb word(colors, i) notitle, \
       NaN w l lw 7 lc rgb "#A0808080" t "Fourier, one radius", NaN w lp pt 6 dt 2 lw 1.5 lc rgb "gray30" t "Gaussian h^2 I", \
       NaN w lp pt 4 dt 3 lw 1.5 lc rgb "gray30" t "Gaussian full H"
  set title "MISE* over the full-H Gaussian KDE's: Fourier (wide band), Gaussian h^2 I (dashed)"
  unset logscale y
  set format y "%g"
  set ylabel "MISE* / MISE*(Gaussian, full H)"
  set yrange [0:*]
  plot for [i = 1:words(ns)] f every nn::(i-1) u (x($1)):11 w l lw 7 lc rgb light(word(colors, i)) t "N = ".word(ns, i), \
       for [i = 1:words(ns)] f every nn::(i-1) u (x($1)):12 w lp pt 6 ps 1 lw 1.5 dt 2 lc rgb word(colors, i) notitle, \
       1 w l lw 1 lc rgb "gray" notitle
  unset multiplot
  unset output
  reset
}
