#!/usr/bin/env bash
# The output rule, as a property: a random sample (fixed seed) of commands
# given extreme finite inputs (values and options from 5e-324 to 1.8e308)
# either succeeds with only finite numbers in its rows, or fails with exit
# status 1 or 2 and a message. NaN may appear only in rows the command
# flags as such (regress, attention: '# flagged:' above 0); inf never.
# Usage: output_rule_test.sh path/to/gfi [TRIALS]
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
case $GFI in /*) ;; *) GFI=$PWD/$GFI ;; esac
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:allocator_may_return_null=1"
cd "$T" || exit 1
TRIALS=${2:-150}
RANDOM=24 # bash's generator, seeded: the same sample every run

V=(1e308 -1e308 1.7e308 1e300 -1e300 1e200 -1e200 1e154 1e-300 5e-324 -5e-324 2.2e-308 0 1e15 4.6e15 -3
   0.5 1 2 1e-10 7e307)
SMALL=(0.1 -0.7 1.3 0.25 -2 0)
pick() { local -n a=$1; echo "${a[RANDOM % ${#a[@]}]}"; }
val() { if ((RANDOM % 3)); then pick SMALL; else pick V; fi; } # mostly ordinary, a third extreme
# table FILE ROWS COLS
table() {
  local i j line
  for ((i = 0; i < $2; i++)); do
    line=""
    for ((j = 0; j < $3; j++)); do line+="$(val) "; done
    echo "$line"
  done >"$1"
}
RS=(1e-300 1e-10 0.3 1 3 1e10 1e150 1e300)
BW=(1e-300 1e-150 1e-5 0.3 1 1e150 1e300 scott silverman)
GRIDS=(0:1:3 -1e308:1e308:3 -1e300:1e300:5 1e300:1.5e300:4 -5e-324:5e-324:3 -1e154:1e154:2 0:1e-300:3)

trial() {
  local kind=$((RANDOM % 9)) n=$((1 + RANDOM % 6)) D=$((1 + RANDOM % 2))
  table d.txt "$n" "$D"
  table q.txt 3 "$D"
  case $kind in
    0) args=(density --data d.txt --R "$(pick RS)" --at q.txt) ;;
    1) args=(density --data d.txt --kernel gauss --bandwidth "$(pick BW)" --at q.txt) ;;
    2) args=(density --data d.txt --R "$(pick RS)" --grid "$(pick GRIDS)") ;;
    3) table r.txt "$n" $((D + 1)); args=(regress --data r.txt --dim "$D" --R "$(pick RS)" --at q.txt) ;;
    4) table r.txt "$n" $((D + 1)); args=(regress --data r.txt --dim "$D" --kernel gauss --bandwidth "$(pick BW)"
         --at q.txt) ;;
    5) table v.txt "$n" 2; table k.txt "$n" "$D"; table qq.txt "$n" "$D"
       args=(attention --q qq.txt --k k.txt --v v.txt)
       if ((RANDOM % 2)); then args+=(--R "$(pick RS)"); else args+=(--kind softmax); fi
       ((RANDOM % 2)) && args+=(--grad g) ;;
    6) args=(pdf --model "normal:mean=$(val)" --at q.txt --dim 1); table q.txt 3 1 ;;
    7) args=(sample --model "laplace:$(val),$(pick RS)" --n 5 --seed "$RANDOM") ;;
    8) args=(regress-sample --model normal --truth "poly:$(val),$(val)" --noise "gauss:$(pick SMALL | tr -d -)"
         --n 5 --seed "$RANDOM") ;;
  esac
  timeout 60 "$GFI" "${args[@]}" >out 2>err
  local rc=$?
  case $rc in
    0)
      local flagged
      flagged=$(sed -n 's/^# flagged: \([0-9]*\).*/\1/p' out)
      if grep -v '^#' out | grep -qiE '(^|[ ,])[-+]?inf'; then bad "inf with exit 0: gfi ${args[*]}"; return; fi
      if grep -v '^#' out | grep -qiE '(^|[ ,])[-+]?nan' && [ "${flagged:-0}" -eq 0 ]; then
        bad "NaN in unflagged rows with exit 0: gfi ${args[*]} ($(grep -v '^#' out | head -2 | tr '\n' '|'))"; return
      fi
      for f in g.dQ g.dK g.dV g.dR; do
        [ -f "$f" ] && grep -v '^#' "$f" | grep -qiE '(^|[ ,])[-+]?inf' && { bad "inf in $f: gfi ${args[*]}"; return; }
      done
      nok=$((nok + 1))
      ok ;;
    1 | 2) nerr=$((nerr + 1)); [ -s err ] && ok || bad "exit $rc without a message: gfi ${args[*]}" ;;
    *) bad "exit $rc (a crash or a hang): gfi ${args[*]}; $(head -c 300 err)" ;;
  esac
  rm -f g.dQ g.dK g.dV g.dR
}
nok=0 nerr=0
for ((t = 0; t < TRIALS; t++)); do trial; done
echo "output-rule: $nok runs succeeded (finite rows), $nerr refused with a message"
finish "output-rule"
