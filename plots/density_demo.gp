# Density demonstration figures. Usage: gnuplot -e "dir='results'" plots/density_demo.gp
if (!exists("dir")) dir = "results"
f1 = dir."/density_demo_1d.dat"
f2 = dir."/density_demo_2d.dat"
# sample sizes from the data files' metadata, so titles follow --n
n1 = system("sed -n 's/^# model:.* N = \\([0-9]*\\).*/\\1/p' ".f1)
n2 = system("sed -n 's/^# model:.* N = \\([0-9]*\\).*/\\1/p' ".f2)

do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1000,600 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 10in,6in enhanced font "Sans,10" }
  set output dir."/density_demo_1d.".fmt
  set title "Marron-Wand claw, N = ".n1.": generalized Fourier estimator ({/Symbol f}(z) = z^4) vs Gaussian KDE"
  set xlabel "x"
  set ylabel "density"
  set key top left box opaque
  set grid
  set xrange [-3:3]
  plot f1 u 1:2 w l lw 3 lc rgb "black" t "truth", \
       f1 u 1:4 w l lw 2 lc rgb "#d62728" t "Fourier, R = 10", \
       f1 u 1:3 w l lw 2 lc rgb "#1f77b4" dt 2 t "Fourier, R = 3", \
       f1 u 1:5 w l lw 2 lc rgb "#2ca02c" dt 4 t "Gaussian KDE (Scott)"
  unset output
  reset

  if (fmt eq "png") { set terminal pngcairo size 1200,540 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 12in,5.4in enhanced font "Sans,10" }
  set output dir."/density_demo_2d.".fmt
  set multiplot layout 1,2 title "Correlated normal (cov = [1 0.6; 0.6 0.8]), N = ".n2
  set view map
  set size ratio -1
  set xlabel "x_1"
  set ylabel "x_2"
  set xrange [-3:3]
  set yrange [-3:3]
  set cbrange [0:0.23]
  set palette rgbformulae 33,13,10
  set title "truth"
  splot f2 u 1:2:3 w pm3d notitle
  set title "Fourier estimate, {/Symbol f}(z) = z^4, R = 3"
  splot f2 u 1:2:4 w pm3d notitle
  unset multiplot
  unset output
  reset
}
