#!/usr/bin/env bash
# gfi attention: the forward against an independent awk computation (Fourier
# and softmax, several heads, per-head radii, causal), the gradients against
# central finite differences of sum(dH * H) computed from the CLI's own
# forward, .npy input and output equal to text, thread independence, and bad
# input reaching its message and exit code.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

L=4
awk -v L=$L 'BEGIN { srand(3); for (i = 0; i < L; i++) printf "%.6f %.6f %.6f %.6f\n", rand() - 0.5, rand() - 0.5, rand() - 0.5, rand() - 0.5 }' >"$T/q"
awk -v L=$L 'BEGIN { srand(5); for (i = 0; i < L; i++) printf "%.6f %.6f %.6f %.6f\n", rand() - 0.5, rand() - 0.5, rand() - 0.5, rand() - 0.5 }' >"$T/k"
awk -v L=$L 'BEGIN { srand(7); for (i = 0; i < L; i++) printf "%.6f %.6f\n", rand(), rand() - 0.5 }' >"$T/v"
awk -v L=$L 'BEGIN { srand(11); for (i = 0; i < L; i++) printf "%.6f %.6f\n", rand() - 0.5, rand() - 0.5 }' >"$T/dh"

expect 0 "" -- "$GFI" attention --help
grep -q "usage: gfi attention" "$T/out" && ok || bad "--help"

# brute force: heads = 2 (D = 2, Dv = 1), kind fourier (l, radii r1..r4 per head and axis) or softmax (scale s)
brute() { # kind l causal s r1 r2 r3 r4
  awk -v kind="$1" -v l="$2" -v causal="$3" -v s="$4" -v r1="$5" -v r2="$6" -v r3="$7" -v r4="$8" '
    function sinc(x) { return x == 0 ? 1 : sin(x) / x }
    FILENAME == ARGV[1] { for (j = 1; j <= 4; j++) Q[FNR, j] = $j; n = FNR; next }
    FILENAME == ARGV[2] { for (j = 1; j <= 4; j++) K[FNR, j] = $j; next }
    { V[FNR, 1] = $1; V[FNR, 2] = $2 }
    END {
      R[1] = r1; R[2] = r2; R[3] = r3; R[4] = r4
      for (i = 1; i <= n; i++) {
        line = ""
        for (h = 0; h < 2; h++) {
          m = -1e300
          for (j = 1; j <= n; j++) { d = Q[i, 2*h+1] * K[j, 2*h+1] + Q[i, 2*h+2] * K[j, 2*h+2]; if (s * d > m) m = s * d }
          num = 0; den = 0
          for (j = 1; j <= (causal ? i : n); j++) {
            if (kind == "fourier") {
              w = sinc(R[2*h+1] * (Q[i, 2*h+1] - K[j, 2*h+1]))^l * sinc(R[2*h+2] * (Q[i, 2*h+2] - K[j, 2*h+2]))^l
            } else {
              w = exp(s * (Q[i, 2*h+1] * K[j, 2*h+1] + Q[i, 2*h+2] * K[j, 2*h+2]) - m)
            }
            num += w * V[j, h + 1]; den += w
          }
          line = line (h ? " " : "") sprintf("%.17g", num / den)
        }
        print line
      }
    }' "$T/q" "$T/k" "$T/v"
}
close_to() { # two files, tolerance
  awk -v tol="$3" 'NR == FNR { a[FNR] = $0; next } { split(a[FNR], x, " "); for (c = 1; c <= NF; c++) { d = x[c] - $c; if (d < 0) d = -d; if (!(d <= tol)) { print "row " FNR " col " c ": " x[c] " vs " $c; exit 1 } } n++ }
    END { exit n == 0 }' "$1" "$2"
}
expect 0 "" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.5,2,0.7,1.2
data "$T/out" >"$T/h1"
brute fourier 4 0 1 1.5 2 0.7 1.2 >"$T/b1"
close_to "$T/h1" "$T/b1" 1e-13 && ok || bad "fourier forward vs awk: $(paste "$T/h1" "$T/b1")"
expect 0 "" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.3 --l 2 --causal
brute fourier 2 1 1 1.3 1.3 1.3 1.3 >"$T/b2"
close_to <(data "$T/out") "$T/b2" 1e-13 && ok || bad "fourier causal l = 2 vs awk"
expect 0 "" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --kind softmax
brute softmax 0 0 0.70710678118654746 0 0 0 0 >"$T/b3"
close_to <(data "$T/out") "$T/b3" 1e-13 && ok || bad "softmax vs awk"
expect 0 "" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --kind softmax --scale 3 --causal
brute softmax 0 1 3 0 0 0 0 >"$T/b4"
close_to <(data "$T/out") "$T/b4" 1e-13 && ok || bad "softmax causal scale 3 vs awk"

# gradients of sum(dH * H) against central differences of the CLI's own forward
loss() { "$GFI" attention "$@" | awk 'NR == FNR { d[FNR] = $0; next } /^#/ { next } { n++; split(d[n], x, " "); for (c = 1; c <= NF; c++) s += x[c] * $c }
  END { printf "%.17g\n", s }' "$T/dh" -; }
perturb() { awk -v r="$2" -v c="$3" -v h="$4" 'NR == r { $c = sprintf("%.17g", $c + h) } { print }' "$1"; }
fdcheck() { # kind-args...: checks every entry of Q, K, V (and R for fourier)
  local args=("$@") worst=0
  "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 "${args[@]}" --grad "$T/g" --dh "$T/dh" >/dev/null ||
    { bad "gradients: ${args[*]}"; return; }
  for m in q k v; do
    local name=d$(echo $m | tr a-z A-Z) nc=4
    [ $m = v ] && nc=2
    for r in $(seq 1 $L); do for c in $(seq 1 $nc); do
      perturb "$T/$m" $r $c 1e-6 >"$T/p$m"
      local A=(--q "$T/q" --k "$T/k" --v "$T/v"); A[$(( $( [ $m = q ] && echo 1 || ([ $m = k ] && echo 3 || echo 5)) ))]="$T/p$m"
      lp=$(loss "${A[@]}" --heads 2 "${args[@]}")
      perturb "$T/$m" $r $c -1e-6 >"$T/p$m"
      lm=$(loss "${A[@]}" --heads 2 "${args[@]}")
      g=$(data "$T/g.$name" | awk -v r=$r -v c=$c 'NR == r { print $c }')
      awk -v lp="$lp" -v lm="$lm" -v g="$g" 'BEGIN { d = (lp - lm) / 2e-6 - g; if (d < 0) d = -d; exit !(d < 1e-6) }' ||
        { bad "${args[*]}: $name[$r,$c] = $g, finite difference $(awk -v lp="$lp" -v lm="$lm" 'BEGIN { print (lp - lm) / 2e-6 }')"; return; }
    done; done
  done
  ok
}
fdcheck --R 1.5,2,0.7,1.2
fdcheck --kind softmax --causal
# dR: per head and axis radii against central differences
"$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.5,2,0.7,1.2 --grad "$T/g" --dh "$T/dh" >/dev/null
for a in 1 2 3 4; do
  Rp=$(echo 1.5 2 0.7 1.2 | awk -v a=$a '{ $a = sprintf("%.17g", $a + 1e-6); print $1 "," $2 "," $3 "," $4 }')
  Rm=$(echo 1.5 2 0.7 1.2 | awk -v a=$a '{ $a = sprintf("%.17g", $a - 1e-6); print $1 "," $2 "," $3 "," $4 }')
  lp=$(loss --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R "$Rp")
  lm=$(loss --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R "$Rm")
  g=$(data "$T/g.dR" | awk -v a=$a '{ print $a }')
  awk -v lp="$lp" -v lm="$lm" -v g="$g" 'BEGIN { d = (lp - lm) / 2e-6 - g; if (d < 0) d = -d; exit !(d < 1e-6) }' && ok ||
    bad "dR[$a] = $g vs finite difference"
done

# .npy in and out, thread independence
"$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.5 --out "$T/h.npy" >/dev/null &&
  "$GFI" attention --q "$T/h.npy" --k "$T/h.npy" --v "$T/h.npy" --R 1 >/dev/null && ok || bad "npy out and in"
"$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.5 --threads 1 | data /dev/stdin >"$T/t1"
"$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.5 --threads 3 | data /dev/stdin >"$T/t3"
cmp -s "$T/t1" "$T/t3" && ok || bad "depends on the thread count"
"$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.5 --grad "$T/n" --grad-npy >/dev/null &&
  [ "$(head -c 6 "$T/n.dQ.npy" | tail -c 5)" = "NUMPY" ] && ok || bad "--grad-npy"

# bad input
expect 2 "\-\-q: required" -- "$GFI" attention --k "$T/k" --v "$T/v" --R 1
expect 2 "\-\-R: required for --kind fourier" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v"
expect 2 "\-\-R: expected 1, 4 (per axis) or 4 (per head and axis) radii, got 3" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --R 1,2,3
expect 2 "\-\-heads: 3 heads do not divide" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 3 --R 1
expect 2 "\-\-kind: expected fourier or softmax" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --kind linear
expect 2 "\-\-dh: needs --grad" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --R 1 --dh "$T/dh"
head -3 "$T/k" >"$T/k3"
expect 1 "rows, but --q" -- "$GFI" attention --q "$T/q" --k "$T/k3" --v "$T/v" --R 1
printf '1 2 3 4\n1 x 3 4\n' >"$T/bad"
expect 1 "bad:2" -- "$GFI" attention --q "$T/bad" --k "$T/bad" --v "$T/bad" --R 1
# --phi: pow:L as --l; a polynomial against awk (phi(z) = a1 z + a2 z^2 + a3 z^3), its gradient file
# written; z^4 as a polynomial equal to --l 4 within 1e-13; refusals by name
expect 0 "" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.3 --phi pow:2 --causal
close_to <(data "$T/out") "$T/b2" 1e-13 && ok || bad "--phi pow:2 vs awk"
awk -v a1=0.5 -v a2=0 -v a3=1 -v r=1.1 '
  function sinc(x) { return x == 0 ? 1 : sin(x) / x }
  function phi(z) { return a1 * z + a2 * z * z + a3 * z * z * z }
  FILENAME == ARGV[1] { for (j = 1; j <= 4; j++) Q[FNR, j] = $j; n = FNR; next }
  FILENAME == ARGV[2] { for (j = 1; j <= 4; j++) K[FNR, j] = $j; next }
  { V[FNR, 1] = $1; V[FNR, 2] = $2 }
  END {
    for (i = 1; i <= n; i++) {
      line = ""
      for (h = 0; h < 2; h++) {
        num = 0; den = 0
        for (j = 1; j <= n; j++) {
          w = phi(sinc(r * (Q[i, 2*h+1] - K[j, 2*h+1]))) * phi(sinc(r * (Q[i, 2*h+2] - K[j, 2*h+2])))
          num += w * V[j, h + 1]; den += w
        }
        line = line (h ? " " : "") sprintf("%.17g", num / den)
      }
      print line
    }
  }' "$T/q" "$T/k" "$T/v" >"$T/bp"
expect 0 "" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.1 --phi poly:0.5,0,1 --grad "$T/gp"
close_to <(data "$T/out") "$T/bp" 1e-13 && ok || bad "--phi poly:0.5,0,1 vs awk: $(paste <(data "$T/out") "$T/bp")"
[ -s "$T/gp.dQ" ] && [ -s "$T/gp.dR" ] && ok || bad "--phi poly: gradient files"
expect 0 "" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --heads 2 --R 1.5,2,0.7,1.2 --phi poly:0,0,0,1
close_to <(data "$T/out") "$T/b1" 1e-13 && ok || bad "--phi poly:0,0,0,1 vs the power 4"
expect 2 "\-\-phi: give --phi or --l" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --R 1 --phi pow:2 --l 2
expect 2 "\-\-phi: attention takes pow:L or poly" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --R 1 --phi flattop:0.5
expect 2 "\-\-phi:.*negative" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --R 1 --phi poly:1,-1
expect 2 "\-\-phi: only for --kind fourier" -- "$GFI" attention --q "$T/q" --k "$T/k" --v "$T/v" --kind softmax --phi pow:2
finish "cli attention"
