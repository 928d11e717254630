#!/usr/bin/env bash
# gfi attention, batched layout (4-D .npy): H against a brute force in Python
# (standard library) with the causal offset (Lq < Lk), key padding, a general
# mask and --eps; dQ and dR against finite differences; float32 output;
# thread independence; empty rows; bad shapes and options reaching their
# message and exit code.
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
PY=$(dirname "${BASH_SOURCE[0]}")/attention_npy.py
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
python3 "$PY" make "$T" || { bad "making the inputs"; finish "cli attention batch"; exit 1; }
A=(attention --q "$T/q.npy" --k "$T/k.npy" --v "$T/v.npy" --R 1.1,1.4,0.9,1.2 --causal
   --key-pad "$T/kpad.npy" --mask "$T/mask.npy" --eps 0.01)

expect 0 "" -- "$GFI" "${A[@]}" --out "$T/h.npy" --grad "$T/g"
e=$(python3 "$PY" check "$T" "$T/h.npy")
awk -v e="$e" 'BEGIN { exit !(e < 1e-13) }' && ok || bad "H vs brute force: relative error $e"
e=$(python3 "$PY" fd "$T" "$T/g")
awk -v e="$e" 'BEGIN { exit !(e < 1e-6) }' && ok || bad "dQ, dR vs finite differences: relative error $e"

# float32 (float32 compute, float64 row sums)
expect 0 "" -- "$GFI" "${A[@]}" --out "$T/h32.npy" --dtype float32 --grad "$T/g32"
[ "$(python3 "$PY" dtype "$T/h32.npy")" = "<f4" ] && [ "$(python3 "$PY" dtype "$T/g32.dK.npy")" = "<f4" ] && ok ||
  bad "--dtype float32 writes float32"
e=$(python3 "$PY" cmp "$T/h32.npy" "$T/h.npy")
awk -v e="$e" 'BEGIN { exit !(e < 1e-6) }' && ok || bad "float32 H vs float64: $e"
e=$(python3 "$PY" cmp "$T/g32.dQ.npy" "$T/g.dQ.npy")
awk -v e="$e" 'BEGIN { exit !(e < 1e-5) }' && ok || bad "float32 dQ vs float64: $e"

# threads
"$GFI" "${A[@]}" --out "$T/t1.npy" --threads 1 && "$GFI" "${A[@]}" --out "$T/t3.npy" --threads 3 &&
  cmp -s "$T/t1.npy" "$T/t3.npy" && ok || bad "depends on the thread count"

# empty rows: the whole of batch row 0's keys padded
B=(attention --q "$T/q.npy" --k "$T/k.npy" --v "$T/v.npy" --R 1 --key-pad "$T/allpad.npy")
expect 1 "6 rows see no key (first: batch 0, head 0, query 0): use --empty zero" -- "$GFI" "${B[@]}" --out "$T/e.npy"
expect 0 "" -- "$GFI" "${B[@]}" --out "$T/e.npy" --empty zero

# values near the top of the range: scaled inside the library (H = V exactly, finite gradients)
"$GFI" attention --q "$T/hq.npy" --k "$T/hq.npy" --v "$T/hv.npy" --R 2 --out "$T/hh.npy" --grad "$T/hg" &&
  [ "$(python3 "$PY" allfinite "$T/hh.npy")" = 1e+308 ] &&
  [ "$(python3 "$PY" allfinite "$T/hg.dQ.npy" "$T/hg.dK.npy" "$T/hg.dV.npy")" != nonfinite ] && ok ||
  bad "V = 1e308: H or the gradients not finite"

# bad input
expect 1 "\-\-k $T/kpad.npy: shape (2, 5), expected 4 dimensions (B, H, Lk, D)" -- "$GFI" attention --q "$T/q.npy" --k "$T/kpad.npy" \
  --v "$T/v.npy" --R 1 --out "$T/x.npy"
C=(attention --q "$T/q.npy" --k "$T/k.npy" --v "$T/v.npy" --R 1 --out "$T/x.npy")
expect 1 "\-\-mask $T/kpad.npy: shape (2, 5), expected (Lq, Lk)" -- "$GFI" "${C[@]}" --mask "$T/kpad.npy"
expect 1 "\-\-key-pad $T/mask.npy: shape (2, 3, 5), expected (B, Lk) = (2, 5)" -- "$GFI" "${C[@]}" --key-pad "$T/mask.npy"
expect 1 "\-\-v $T/k.npy: shape (2, 2, 5, 2), expected (B, H, Lk, Dv) with the length = 3" -- "$GFI" attention \
  --q "$T/q.npy" --k "$T/q.npy" --v "$T/k.npy" --R 1 --out "$T/x.npy"
expect 2 "\-\-R: expected 1, 2 (per head) or 4 (per head and axis, R\[h\*D + d\]) radii, got 3" -- "$GFI" attention \
  --q "$T/q.npy" --k "$T/k.npy" --v "$T/v.npy" --R 1,2,3 --out "$T/x.npy"
expect 2 "\-\-out: required with 4-D inputs" -- "$GFI" attention --q "$T/q.npy" --k "$T/k.npy" --v "$T/v.npy" --R 1
expect 2 "\-\-dtype: expected float64 or float32" -- "$GFI" "${A[@]}" --out "$T/x.npy" --dtype half
printf '1 2\n3 4\n' >"$T/t"
expect 2 "\-\-key-pad: only with the batched layout" -- "$GFI" attention --q "$T/t" --k "$T/t" --v "$T/t" --R 1 \
  --key-pad "$T/kpad.npy"
# --phi: z^4 as a polynomial gives the power's H; a polynomial in float32 is its float64 H rounded
expect 0 "" -- "$GFI" "${A[@]}" --out "$T/hp4.npy" --phi poly:0,0,0,1 --grad "$T/gp4"
e=$(python3 "$PY" cmp "$T/hp4.npy" "$T/h.npy")
awk -v e="$e" 'BEGIN { exit !(e < 1e-13) }' && ok || bad "--phi poly:0,0,0,1 vs the power 4: $e"
expect 0 "" -- "$GFI" "${A[@]}" --out "$T/hp.npy" --phi poly:0.5,0,1
expect 0 "" -- "$GFI" "${A[@]}" --out "$T/hp32.npy" --phi poly:0.5,0,1 --dtype float32
e=$(python3 "$PY" cmp "$T/hp32.npy" "$T/hp.npy")
awk -v e="$e" 'BEGIN { exit !(e < 1e-6) }' && ok || bad "--phi poly float32 vs float64: $e"
finish "cli attention batch"
