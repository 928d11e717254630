# Sensitivity of the reproduced MSE to the radius and to the test box
# (gfi reproduce): one panel per experiment, the MSE over seeds (mean and 95%
# interval) against R, one line per box, with the paper's number and the band
# of a factor sqrt(10) around it. gfi reproduce passes: dir, l, rfix, seeds and,
# rmin, rmax (the range of the radii) and,
# for i = 1..3, boxes<i> (the boxes' half-widths), paper<i>, rstar<i>, box<i>.
if (!exists("dir")) dir = "results"
if (!exists("rfix")) rfix = 2
if (!exists("rmin")) rmin = 1
if (!exists("rmax")) rmax = 13
keys = "fig1a fig1b fig2"
names = "'Figure 1A: 1-D density, MSE against the radius R' 'Figure 1B: 2-D density, MSE against the radius R' 'Figure 2: regression, MSE against the radius R'"
dims = "1 2 2"
colors = "#1f77b4 #d62728 #2ca02c #9467bd #8c564b #ff7f0e #17becf"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1650,640 enhanced font "Sans,11" } \
  else { set terminal pdfcairo size 16.5in,6.4in enhanced font "Sans,10" }
  set output dir."/sensitivity.".fmt
  set multiplot layout 1,3 title sprintf("MSE at uniform test points against the radius R and the test box (mean and 95%% interval over %d seeds); black: the paper's number, grey band: within a factor sqrt(10)", seeds)
  set logscale xy
  set xrange [rmin / 1.3 : rmax * 1.3]
  set grid
  set xlabel "radius R (log scale)" offset 0,0.3
  # the radii the table uses, not only the decades
  set xtics ("0.5" 0.5, "1" 1, "2" 2, "3" 3, "5" 5, "8" 8, "13" 13, "20" 20, "30" 30, "50" 50, "100" 100)
  set mxtics default
  set ylabel "MSE"
  set format y "10^{%L}"
  set key below box font ",9" maxrows 3
  set bmargin 9
  do for [i = 1:3] {
    f = dir."/".word(keys, i)."_sensitivity.dat"
    bl = value("boxes".i)
    p = value("paper".i)
    set title word(names, i)
    unset arrow
    set arrow 1 from rfix, graph 0 to rfix, graph 1 nohead dt 2 lc rgb "gray40"
    set arrow 2 from value("rstar".i), graph 0 to value("rstar".i), graph 1 nohead dt 3 lc rgb "gray40"
    set label 1 "fixed R" at rfix, graph 0.97 left offset 0.3,0 font ",9"
    set label 2 "R*" at value("rstar".i), graph 0.97 left offset 0.3,0 font ",9"
    plot for [b = 1:words(bl)] f index (b - 1) u 1:2:($3 > 0 ? $3 : $2 / 10):4 w yerrorlines pt 7 ps 0.7 lw 1.5 \
           lc rgb word(colors, b) t sprintf("box [-%s, %s]^%s%s", word(bl, b), word(bl, b), word(dims, i), \
           (real(word(bl, b)) == value("box".i) ? " (default)" : "")), \
         p * sqrt(10) w filledcurves y1 = p / sqrt(10) fs transparent solid 0.15 lc rgb "black" notitle, \
         p w l lw 2 lc rgb "black" t sprintf("paper %.3g", p)
  }
  unset multiplot
  unset output
  reset
}
