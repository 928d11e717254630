# FLT study figures. Usage: gnuplot -e "dir='results'" plots/flt_study.gp
if (!exists("dir")) dir = "results"
f_r = dir."/flt_err_vs_r.dat"
f_star = dir."/flt_rstar.dat"
f_tau = dir."/flt_err_vs_tau.dat"
f_sh = dir."/flt_shapes_1d.dat"
f_att = dir."/flt_attention_error.dat"
f_sc = dir."/flt_attention_scaling.dat"
L_r = system("sed -n 's/^# setting: positions 0..\\([0-9]*\\) .*/\\1/p' ".f_r." | head -1") + 1
ncase = int(system("grep -c '^# case' ".f_r))
cases = system("sed -n 's/^# case [0-9]*: rpe \\([^ ]*\\) proposal \\([^ ]*\\) c \\(.*\\)/\\1|\\2/p' ".f_r." | tr '\\n' ' '")
cvals = system("sed -n 's/^# case [0-9]*: .* c \\(.*\\)/\\1/p' ".f_r." | tr '\\n' ' '")

do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1500,900 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 15in,9in enhanced font "Sans,9" }
  set output dir."/flt_err_vs_r.".fmt
  set multiplot layout 2,3 title sprintf("FLT random-feature RPE mask: max-norm error vs r (L = %d, complex features)", L_r)
  set logscale xy
  set format y "10^{%L}"
  set xlabel "r (features)"
  set ylabel "max_{ij} |N_{hat} - N|"
  set grid
  set key bottom left box opaque font ",8"
  do for [i=0:ncase-1] {
    set title sprintf("%s, p = %s, c = %s", word(cases, i+1)[1:strstrt(word(cases, i+1), "|")-1], \
      word(cases, i+1)[strstrt(word(cases, i+1), "|")+1:], word(cvals, i+1)[1:6])
    plot f_r index i u 1:2:3 w yerrorlines lw 2 pt 7 ps 0.6 lc rgb "#1f77b4" t "mean", \
         f_r index i u 1:6 w lp lw 1.5 pt 5 ps 0.5 lc rgb "#d62728" t "q99", \
         f_r index i u 1:8 w l lw 1.5 dt 2 lc rgb "#2ca02c" t "Thm A.3: c/sqrt(r) (sd of one entry)", \
         f_r index i u 1:9 w l lw 1.5 dt 4 lc rgb "#9467bd" t "Thm 4.2 eps at delta = 0.01", \
         f_r index i u 1:(1/sqrt($1)) w l lw 1 lc rgb "gray" t "1/sqrt(r)"
  }
  unset multiplot
  unset output
  reset

  if (fmt eq "png") { set terminal pngcairo size 1300,560 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 13in,5.6in enhanced font "Sans,9" }
  set output dir."/flt_rstar.".fmt
  set multiplot layout 1,2 title "Sample complexity: measured r*(eps, delta) (points) vs Theorem 4.2's r = 4c^2/eps^2 log(4L^2/delta) (lines without points)"
  set logscale xy
  set xlabel "L (positions on a line)"
  set ylabel "r"
  set grid
  set key top left font ",8" box opaque
  sel(i, e, d) = sprintf("< awk -v e=%s -v d=%s '/^# case %d/ {b = 1; next} /^# case/ {b = 0} b && !/^#/ && NF && ($2 - e)^2 < 1e-12 && ($3 - d)^2 < 1e-12' %s", e, d, i, f_star)
  # the eps and delta values the file holds (the quick study has fewer)
  epsl = system("awk '!/^#/ && NF && !s[$2]++ {printf \"%g \", $2}' ".f_star)
  dell = system("awk '!/^#/ && NF && !s[$3]++ {printf \"%g \", $3}' ".f_star)
  do for [i=0:1] {
    set title system(sprintf("sed -n 's/^# case %d: rpe \\([^ ]*\\) proposal \\([^ ]*\\) c \\(.\\{1,6\\}\\).*/%s/p' %s", i, "\\1, p = \\2, c = \\3", f_star))
    plot for [ie=1:words(epsl)] for [id=1:words(dell)] sel(i, word(epsl, ie), word(dell, id)) u 1:4 \
           w lp pt (2 * id + 3) lw 1.5 lc ie t sprintf("r*, eps %s, delta %s", word(epsl, ie), word(dell, id)), \
         for [ie=1:words(epsl)] for [id=1:words(dell)] sel(i, word(epsl, ie), word(dell, id)) u 1:8 \
           w l dt 1+id lw 1.5 lc ie notitle, \
         for [id=1:words(dell)] NaN w l dt 1+id lw 1.5 lc rgb "gray30" \
           t sprintf("Thm 4.2's r, delta %s (colour: eps)", word(dell, id))
  }
  unset multiplot
  unset output
  reset

  if (fmt eq "png") { set terminal pngcairo size 1000,600 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 10in,6in enhanced font "Sans,9" }
  set output dir."/flt_err_vs_tau.".fmt
  set title "gauss:s=1 RPE, Gaussian proposal N(0, tau^2): error vs tau (c = inf left of the line tau = 1/(2 pi))"
  set logscale x
  set xlabel "tau"
  set ylabel "max-norm error"
  set y2label "c = sup |g|/p (finite points only)"
  set y2tics
  set ytics nomirror
  set grid
  set arrow from 1/(2*pi), graph 0 to 1/(2*pi), graph 1 nohead dt 2 lc rgb "black"
  set label "c = inf" at graph 0.05, graph 0.92
  set xrange [0.05:0.7]
  set xtics ("0.05" 0.05, "0.07" 0.07, "0.1" 0.1, "1/(2 pi)" 1/(2*pi), "0.2" 0.2, "0.3" 0.3, "0.5" 0.5, "0.7" 0.7)
  set key top right box opaque
  plot f_tau u 1:3:4 w yerrorlines lw 2 pt 7 t "mean", \
       f_tau u 1:6 w lp lw 1.5 pt 5 t "q99", \
       f_tau u 1:($2 < 1e300 ? $2 : 1/0) axes x1y2 w lp lw 1.5 pt 9 lc rgb "black" t "c (right axis)"
  unset output
  reset

  if (fmt eq "png") { set terminal pngcairo size 1300,560 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 13in,5.6in enhanced font "Sans,9" }
  set output dir."/flt_shapes_1d.".fmt
  set multiplot layout 1,2 title "Local RPE shapes f recovered from g by an inverse FFT (lines) vs closed forms (points), v = 1"
  set xlabel "x"
  set ylabel "f(x)"
  set grid
  set xrange [-5:5]
  set key top left font ",8"
  set title "corrected: g = (sin(2{/Symbol p}v{/Symbol x})/({/Symbol p}{/Symbol x}))^k"
  plot for [k=1:4] f_sh u 1:(column(k+1)) w l lw 2 t sprintf("FFT, k = %d", k), \
       for [k=1:4] f_sh every 40 u 1:(column(k+7)) w p pt 7 ps 0.5 lc rgb "black" t (k == 1 ? "closed form" : "")
  set title "as printed: g = sin^k(2{/Symbol p}v{/Symbol x})/({/Symbol p}{/Symbol x})"
  plot f_sh u 1:6 w l lw 2 t "FFT, k = 2 (Im f; Re f = 0)", f_sh u 1:7 w l lw 2 t "FFT, k = 3", \
       f_sh every 40 u 1:12 w p pt 7 ps 0.5 lc rgb "black" t "closed form", f_sh every 40 u 1:13 w p pt 7 ps 0.5 lc rgb "black" notitle
  unset multiplot
  unset output
  reset

  if (fmt eq "png") { set terminal pngcairo size 1500,900 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 15in,9in enhanced font "Sans,9" }
  set output dir."/flt_fig4.".fmt
  set multiplot layout 2,3 title "FLT Figure 4: 2-D local RPE shapes f(x_1, x_2) by inverse FFT of g (v = 1); top: corrected transform, bottom: as printed"
  set pm3d depthorder
  set palette rgbformulae 33,13,10
  set xlabel "x_1"
  set ylabel "x_2"
  set view 55, 35
  unset key
  set xrange [-3.2:3.2]
  set yrange [-3.2:3.2]
  do for [k=1:3] {
    set title sprintf("corrected, k = %d", k)
    splot dir.sprintf("/flt_shape2d_local_k%d.dat", k) u 1:2:3 every 2:2 w pm3d
  }
  set title "printed, k = 2 (Re f: in 2-D the two imaginary factors give i i = -1)"
  splot dir."/flt_shape2d_paper_k2.dat" u 1:2:3 every 2:2 w pm3d
  set title "printed, k = 3 (Re f)"
  splot dir."/flt_shape2d_paper_k3.dat" u 1:2:3 every 2:2 w pm3d
  # the imaginary part is rounding noise ~1e-32: short labels ("3e-32"),
  # which the colour box at the figure's right edge does not clip
  set title "printed, k = 2: Im f (zero up to rounding)"
  set format z "%.0e"
  set format cb "%.0e"
  set colorbox user origin screen 0.935, screen 0.34 size screen 0.01, screen 0.2
  splot dir."/flt_shape2d_paper_k2.dat" u 1:2:4 every 2:2 w pm3d
  set format z "% h"
  set format cb "% h"
  set colorbox default
  unset multiplot
  unset output
  reset

  if (fmt eq "png") { set terminal pngcairo size 1300,560 enhanced font "Sans,10" } \
  else { set terminal pdfcairo size 13in,5.6in enhanced font "Sans,9" }
  set output dir."/flt_attention.".fmt
  set multiplot layout 1,2 title "FLT attention (Algorithm 1, FAVOR+) vs exact RPE attention; time and memory vs L"
  set logscale xy
  set grid
  set xlabel "m (FAVOR+ features)"
  set ylabel "relative Frobenius error of the output"
  set key bottom left font ",8"
  set title "output error (gauss:s=4 RPE, optimal p)"
  asel(r, o) = sprintf("< awk '!/^#/ && NF && $1 == %s && $3 == %d' %s", r, o, f_att)
  rl = system("awk '!/^#/ && NF && !s[$1]++ {printf \"%g \", $1}' ".f_att)  # the r values run
  plot for [i=1:words(rl)] asel(word(rl, i), 0) u 2:4:5 w yerrorlines pt 7 lw 1.5 lc i t sprintf("r = %s, iid", word(rl, i)), \
       for [i=1:words(rl)] asel(word(rl, i), 1) u 2:4:5 w yerrorlines pt 5 dt 2 lw 1.5 lc i t sprintf("r = %s, orthogonal", word(rl, i))
  set xlabel "L"
  set ylabel "seconds"
  set y2label "accounted MB"
  set logscale y2
  set y2tics
  set ytics nomirror
  set key top left font ",8"
  set title "time (lines) and memory (dashed, right axis)"
  plot f_sc u 1:2 w lp pt 7 lw 2 t "FLT", f_sc u 1:3 w lp pt 5 lw 2 t "FAVOR+", \
       f_sc u 1:4 w lp pt 9 lw 2 t "exact (streamed)", f_sc u 1:5 w lp pt 11 lw 2 t "exact (L x L)", \
       f_sc u 1:($6/1e6) axes x1y2 w l dt 2 lw 1.5 lc 1 t "FLT MB", f_sc u 1:($9/1e6) axes x1y2 w l dt 2 lw 1.5 lc 4 t "exact (L x L) MB"
  unset multiplot
  unset output
  reset
}

# FLT's own configurations (flt_paper.dat): mean max-norm error vs r per case,
# with Theorem A.3's c/sqrt(r) where c is finite (none where c = inf)
f_pa = dir."/flt_paper.dat"
if (system("test -s ".f_pa." && echo 1 || echo 0") + 0) {
  npa = int(system("grep -c '^# case' ".f_pa))
  patitle(i) = system(sprintf("sed -n 's/^# case %d: \\(.*\\) | ell .* | c \\(.*\\)/\\1, c = \\2/p' '%s' | sed 's/ | rpe / /; s/ | proposal /, p = /'", i, f_pa))
  pcols = 3
  prows = int((npa + pcols - 1) / pcols)
  do for [fmt in "png pdf"] {
    if (fmt eq "png") { set terminal pngcairo size 640*pcols,440*prows enhanced font "Sans,11" } \
    else { set terminal pdfcairo size (6.4*pcols),(4.4*prows) enhanced font "Sans,10" }
    set output dir."/flt_paper.".fmt
    set multiplot layout prows,pcols title "FLT's own configurations: max-norm error of the RPE mask vs r (where c = inf, Theorems A.3/4.2 give no bound)" font ",14"
    set logscale xy
    set format y "10^{%L}"
    set xlabel "r"
    set ylabel "max_{ij} |N_{hat} - N|"
    set grid
    set key bottom left box opaque font ",9"
    do for [i=0:npa-1] {
      set title patitle(i) font ",11" noenhanced
      plot f_pa index i u 1:2:3 w yerrorlines lw 2 pt 7 ps 0.5 lc rgb "#1f77b4" t "mean", \
           f_pa index i u 1:4 w lp lw 1 pt 5 ps 0.4 lc rgb "#d62728" t "q99", \
           f_pa index i u 1:($5 < 1e300 ? $6 : 1/0) w l lw 1.5 dt 2 lc rgb "#2ca02c" t "c/sqrt(r): Thm A.3, s.d. of one entry", \
           f_pa index i u 1:8 w l lw 1 dt 3 lc rgb "gray40" t "r^{-1/2} from the first r"
    }
    unset multiplot
    unset output
  }
}
