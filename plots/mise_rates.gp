# Rate checks (gfi rates --out DIR): MISE*(N) = min_R MISE with the fitted
# line and the theorem's slope, one panel per theorem, and R*(N).
# Usage: gnuplot -e "dir='results/rates'" plots/mise_rates.gp
if (!exists("dir")) dir = "results"
meta(file, key) = system("sed -n 's/^# ".key.": //p' ".file)
# a long model specification (a mixture's components) would be cut at the
# panel's edge: a mixture is named by its component count (the full
# specification is in the .dat file's "# model:" line)
short(s) = (strlen(s) > 34 && s[1:4] eq "mix:") ? \
  system(sprintf("printf '%%s' '%s' | awk -F'|' '{printf \"normal mixture, %%d components\", NF}'", s)) : \
  (strlen(s) > 34 ? s[1:31]."..." : s)
colors = "#1f77b4 #d62728 #2ca02c #9467bd #8c564b #ff7f0e"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1500,1000 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 15in,10in enhanced font "Sans,9" }
  set output dir."/mise_rates.".fmt
  set multiplot layout 2,2 title "FourierFormer rate theorems against the exact MISE at the optimal radius R*"
  do for [th in "1 3a 3b"] {
    files = system("ls ".dir."/rates_".th."_*.dat 2>/dev/null")
    lv = (th eq "1") ? 4 : ((th eq "3a") ? 1 : 2)
    set title sprintf("Theorem %s (phi = z^%d): MISE*(N); dashed: fitted line, dotted: theorem's slope from the last point", th, lv)
    set logscale xy
    set format x "10^{%L}"
    set format y "10^{%L}"
    set xlabel "N"
    set ylabel "MISE*"
    set key bottom left box opaque
    set grid
    # a theorem without rows (gfi rates --theorems) gets a panel that says so
    if (words(files) == 0) {
      set title sprintf("Theorem %s (phi = z^%d)", th, lv)
      unset logscale; unset border; unset tics; unset grid; unset xlabel; unset ylabel; unset key
      set label 99 sprintf("not checked in this run\n(gfi rates --theorems left Theorem %s out)", th) at graph 0.5, 0.5 center
      plot [0:1] [0:1] NaN notitle
      unset label 99
      set border; set tics; set key
      continue
    }
    plot for [i = 1:words(files)] word(files, i) u 1:3 w lp pt 7 ps 0.7 lw 2 lc rgb word(colors, i) \
           t sprintf("%s: slope %.3f (claimed %.3f)", short(meta(word(files, i), "model")), \
                     real(word(meta(word(files, i), "fit"), 2)), real(meta(word(files, i), "claimed"))), \
         for [i = 1:words(files)] word(files, i) u 1:(exp(real(word(meta(word(files, i), "fit"), 1))) * $1**real(word(meta(word(files, i), "fit"), 2))) \
           w l dt 2 lw 1.5 lc rgb word(colors, i) notitle, \
         for [i = 1:words(files)] word(files, i) u 1:(real(system("tail -1 ".word(files, i)." | awk '{print $3}'")) * ($1 / real(system("tail -1 ".word(files, i)." | awk '{print $1}'")))**real(meta(word(files, i), "claimed"))) \
           w l dt 3 lw 1.5 lc rgb word(colors, i) notitle
  }
  set title "Optimal radius R*(N) (Theorem 1: z^4 solid, 3a: z^1 dashed, 3b: z^2 dotted); Gaussian KDE h* not shown"
  set ylabel "R*"
  set format y "%g"
  f1 = system("ls ".dir."/rates_1_*.dat 2>/dev/null")
  f3a = system("ls ".dir."/rates_3a_*.dat 2>/dev/null")
  f3b = system("ls ".dir."/rates_3b_*.dat 2>/dev/null")
  # gnuplot 5.4 runs the body of an empty "for" once (a warning about the
  # file " "): only the theorems with files enter the plot
  cmd = ""
  if (words(f1) > 0) { cmd = cmd.", for [i = 1:words(f1)] word(f1, i) u 1:2 w lp pt 7 ps 0.6 lw 2 lc rgb word(colors, i) t short(meta(word(f1, i), 'model'))" }
  if (words(f3a) > 0) { cmd = cmd.", for [i = 1:words(f3a)] word(f3a, i) u 1:2 w lp pt 5 ps 0.6 lw 2 dt 2 lc rgb word(colors, i) notitle" }
  if (words(f3b) > 0) { cmd = cmd.", for [i = 1:words(f3b)] word(f3b, i) u 1:2 w lp pt 9 ps 0.6 lw 2 dt 3 lc rgb word(colors, i) notitle" }
  if (strlen(cmd) > 0) { eval "plot ".cmd[3:*] } else { plot [0:1] [0:1] NaN notitle }
  unset multiplot
  unset output
  reset
}
