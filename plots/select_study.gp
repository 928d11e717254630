# The data-driven radius study (experiments/select_study.c): ISE at the
# selected radius or bandwidth over ISE at that sample's oracle, median and
# quartiles over replications, against N, one panel per truth.
#   gnuplot -e "in='select_study.dat'; out='select_study'" plots/select_study.gp
# writes out.png and out.pdf.
if (!exists("in")) in = "select_study.dat"
if (!exists("out")) out = "select_study"
titles = "normal MW2-skewed MW6-bimodal MW10-claw Laplace t5"
# each N has its three methods in this order: every 3::k keeps one method, so
# its points join into a line (sel() still checks the method)
sel(m, c) = (strcol(3) eq m) ? column(c) : 1/0
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1500,900 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 15in,9in enhanced font "Sans,10" }
  set output out.".".fmt
  set multiplot layout 2,3 title "ISE(selected) / ISE(oracle of the sample): median and quartiles over replications (Fourier phi = z^4; Gaussian KDE)" noenhanced
  set logscale x
  set logscale y
  set format x "10^{%L}"
  set xrange [50:3e6]
  set yrange [0.95:8]
  set ytics (1, 1.25, 1.5, 2, 3, 5)
  set grid
  set xlabel "N"
  set ylabel "ISE ratio"
  set key top right box opaque
  do for [t = 0:5] {
    set title word(titles, t + 1) noenhanced
    plot in index t every 3::0 u ($2 * 0.9):(sel("fourier-lscv", 6)):(sel("fourier-lscv", 5)):(sel("fourier-lscv", 7)) \
           w yerrorlines lw 2 pt 7 lc rgb "#d62728" t "Fourier, LSCV", \
         '' index t every 3::1 u 2:(sel("gauss-lscv", 6)):(sel("gauss-lscv", 5)):(sel("gauss-lscv", 7)) \
           w yerrorlines lw 2 pt 5 dt 2 lc rgb "#1f77b4" t "Gaussian, LSCV", \
         '' index t every 3::2 u ($2 * 1.1):(sel("gauss-dpi", 6)):(sel("gauss-dpi", 5)):(sel("gauss-dpi", 7)) \
           w yerrorlines lw 2 pt 9 dt 4 lc rgb "#2ca02c" t "Gaussian, plug-in (SJ)"
  }
  unset multiplot
  unset output
  reset
}
