# Theorem 1 with several kernel powers (gfi rates --theorems 1 --l1 3,4,6,8 --out DIR).
# Usage: gnuplot -e "dir='results/rates/powers'" plots/rates_powers.gp
# Left: MISE*(N) = min_R MISE for each power l and truth, with the fitted
# slope in the key. Right: the optimal radius R*(N).
if (!exists("dir")) dir = "results"
meta(file, key) = system("sed -n 's/^# ".key.": //p' ".file)
files = system("ls ".dir."/rates_1_*.dat 2>/dev/null")
lab(f) = sprintf("%s, z^%s", meta(f, "model"), word(meta(f, "kernel"), 2)[5:])
colors = "#1f77b4 #d62728 #2ca02c #9467bd #8c564b #ff7f0e #17becf #7f7f7f"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,560 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 14in,5.6in enhanced font "Sans,9" }
  set output dir."/rates_powers.".fmt
  set multiplot layout 1,2 title "Theorem 1 with phi = z^l: what the kernel power changes (exact MISE at the optimal radius)" font ",12"
  set logscale xy
  set format x "10^{%L}"
  set xlabel "N"
  set grid
  set key bottom left box opaque
  set title "MISE*(N); key: fitted slope (Theorem 1 claims -2/(D+2))"
  set format y "10^{%L}"
  set ylabel "MISE*"
  plot for [i = 1:words(files)] word(files, i) u 1:3 w lp pt 7 ps 0.7 lw 2 lc rgb word(colors, i) \
         t sprintf("%s: slope %.3f", lab(word(files, i)), real(word(meta(word(files, i), "fit"), 2)))
  set title "Optimal radius R*(N)"
  set format y "%g"
  set ylabel "R*"
  set key top left box opaque
  plot for [i = 1:words(files)] word(files, i) u 1:2 w lp pt 7 ps 0.7 lw 2 lc rgb word(colors, i) t lab(word(files, i))
  unset multiplot
  unset output
  reset
}
