# FourierFormer Lemma 1 (gfi concentration --out DIR). Usage:
#   gnuplot -e "dir='results'" plots/lemma1.gp
# One panel per point x: the empirical tail P(|p_hat(x) - E p_hat(x)| >= t)
# over the replications (with binomial standard errors), Bernstein's bound
# with the exact variance and with the density-free sup-norm variance, and
# the normal approximation 2 Q(t sqrt(N)/sigma) for reference.
if (!exists("dir")) dir = "results"
f = dir."/lemma1.dat"
stats f u 1 nooutput
nb = STATS_blocks
setting = system("sed -n 's/^# setting: //p' ".f." | head -1")
xs = system("sed -n 's/^# x = \\([^:]*\\):.*/\\1/p' ".f." | tr '\\n' ' '")
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 620*nb,500 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size (6.2*nb),5.0 enhanced font "Sans,9" }
  set output dir."/lemma1.".fmt
  set multiplot layout 1,nb title "Lemma 1: tail of |p_{hat}(x) - E p_{hat}(x)| against Bernstein's bound\n{/*0.8 ".setting."}" font ",12"
  set logscale y
  set yrange [1e-5:1e3]
  set ytics 1e-5, 10, 1
  set format y "10^{%L}"
  set xlabel "t"
  set ylabel "P(|p_{hat}(x) - E p_{hat}(x)| >= t)"
  set grid
  set key top right box opaque font ",9"
  do for [i=0:nb-1] {
    set title sprintf("x = %s", word(xs, i+1))
    plot f index i u 1:($2 > 0 ? $2 : 1/0):3 w yerrorbars pt 7 ps 0.5 lc rgb "black" t "empirical (± s.e.)", \
         f index i u 1:4 w l lw 2 lc rgb "#d62728" t "Bernstein, exact sigma^2", \
         f index i u 1:5 w l lw 2 dt 2 lc rgb "#9467bd" t "Bernstein, sigma^2 <= ||p||_{inf} R A_{2l}/A_l^2", \
         f index i u 1:6 w l lw 1.5 dt 3 lc rgb "#2ca02c" t "normal approximation"
  }
  unset multiplot
  unset output
}
