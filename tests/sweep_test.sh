#!/usr/bin/env bash
# gfi sweep's file discipline (no MPI needed): two sweeps on one FILE at once
# (the lock), and resumes of damaged files: a value field corrupted to
# garbage or nan (the row is dropped and its point computed again), a row
# that names another point (refused), a header cut inside (written again).
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

SW=(--model normal --model laplace --dims 1 --phis 1,2 --ns 150,300 --Rs 1,2,3 --reps 0,150 --seed 9)
"$GFI" sweep --out "$T/full.dat" "${SW[@]}" --threads 1 || bad "sweep ran"
[ "$(grep -vc '^#' "$T/full.dat")" -eq 48 ] && ok || bad "sweep rows"
[ ! -e "$T/full.dat.lock" ] && ok || bad "a finished sweep left its lock file"
rows() { grep -v '^#' "$1" | sort -n; }

# --- the lock: a sweep holding FILE makes a second one exit 1 naming the holder
# SLOW: 40 Monte-Carlo points (about 20 s, minutes sanitized); every sweep of
# it here is killed once its checks are done, so it costs only the time up to
# the kill, and it cannot finish and free its lock before those checks
SLOW=(--model normal --dims 1 --phis 2 --ns 20000 --Rs "$(seq -s, 1 40)" --reps 400 --seed 1 --threads 1)
"$GFI" sweep --out "$T/slow.dat" "${SLOW[@]}" &
pid=$!
for _ in $(seq 1 200); do [ -s "$T/slow.dat.lock" ] && break; sleep 0.05; done
expect 1 "slow.dat is being written by another sweep (pid $pid on " -- "$GFI" sweep --out "$T/slow.dat" "${SLOW[@]}"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
# the lock goes with its holder: after the kill the file resumes
"$GFI" sweep --out "$T/slow.dat" --model normal --dims 1 --phis 2 --ns 20000 --Rs "$(seq -s, 1 40)" --reps 400 --seed 1 \
  --threads 2 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -s "$T/slow.dat.lock" ] && break; sleep 0.05; done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ -e "$T/slow.dat.lock" ] && ok || bad "no lock file seen"
# two started together on a fresh file: exactly one writes it
"$GFI" sweep --out "$T/two.dat" "${SW[@]}" --threads 1 2>"$T/e1" & p1=$!
"$GFI" sweep --out "$T/two.dat" "${SW[@]}" --threads 1 2>"$T/e2" & p2=$!
wait "$p1"; r1=$?
wait "$p2"; r2=$?
[ $((r1 + r2)) -eq 1 ] && ok || bad "two sweeps at once: exit codes $r1 and $r2"
cat "$T/e1" "$T/e2" | grep -q "being written by another sweep" && ok || bad "the loser does not name the holder"
diff <(rows "$T/full.dat") <(rows "$T/two.dat") >/dev/null && ok || bad "the file written by two sweeps at once differs"
"$GFI" sweep --out "$T/two.dat" "${SW[@]}" && diff <(rows "$T/full.dat") <(rows "$T/two.dat") >/dev/null && ok ||
  bad "the file written by two sweeps at once does not resume"

# --- corrupted value fields: dropped with a message naming file:line:column, recomputed
for v in garbage nan inf -1 1e999 ''; do
  awk -v v="$v" '!/^#/ && $1 == 5 {$8 = v} {print}' "$T/full.dat" >"$T/c.dat"
  [ -z "$v" ] && { expect 1 "c.dat:[0-9]*:1: not a row of this sweep (11 fields" -- "$GFI" sweep --out "$T/c.dat" "${SW[@]}"; continue; }
  "$GFI" sweep --out "$T/c.dat" "${SW[@]}" 2>"$T/err" || bad "resume with mise = '$v'"
  grep -q "c.dat:[0-9]*:[0-9]*: point 5's mise field '$v' is corrupted.*computed again" "$T/err" && ok ||
    bad "no message for mise = '$v': $(cat "$T/err")"
  diff <(rows "$T/full.dat") <(rows "$T/c.dat") >/dev/null && ok || bad "mise = '$v' not recomputed"
done
awk '!/^#/ && $1 == 7 {$11 = "nan"} !/^#/ && $1 == 9 {$9 = "x"} {print}' "$T/full.dat" >"$T/c.dat"
"$GFI" sweep --out "$T/c.dat" "${SW[@]}" 2>"$T/err" || bad "resume with var = nan"
[ "$(grep -c "corrupted" "$T/err")" -eq 2 ] && ok || bad "two corrupted rows, messages: $(cat "$T/err")"
diff <(rows "$T/full.dat") <(rows "$T/c.dat") >/dev/null && ok || bad "var = nan, se = x not recomputed"
# a row whose key fields were edited (a point field that is not its index's,
# an index out of range or not a number), with or without its checksum
# recomputed: dropped with a message naming the column, its point computed
# again (the sweep key guarantees the grid), as --help says
fix_sum() { /usr/bin/python3 -c '
import sys
for line in sys.stdin:
    f = line.split()
    if line.startswith("#") or len(f) != 12:
        sys.stdout.write(line); continue
    h = 2166136261
    for c in " ".join(f[:11]).encode():
        h = ((h ^ c) * 16777619) & 0xffffffff
    print(" ".join(f[:11] + ["%08x" % h]))'; }
key_case() { # NAME AWK-EDIT PATTERN [fix]
  awk "$2" "$T/full.dat" >"$T/c.dat"
  [ "${4:-}" = fix ] && { fix_sum <"$T/c.dat" >"$T/c2.dat" && mv "$T/c2.dat" "$T/c.dat"; }
  "$GFI" sweep --out "$T/c.dat" "${SW[@]}" >/dev/null 2>"$T/err" || bad "$1: resume failed: $(cat "$T/err")"
  grep -q "$3.*(a key field was changed); the row is dropped and its point computed again" "$T/err" && ok ||
    bad "$1: no message: $(cat "$T/err")"
  diff <(rows "$T/full.dat") <(rows "$T/c.dat") >/dev/null && ok || bad "$1: not recomputed"
}
key_case "model edited" '!/^#/ && $1 == 5 {$2 = "laplace"} {print}' \
  "c.dat:[0-9]*:3: point 5's model is 'normal' in this sweep, the row says 'laplace'"
key_case "n edited, checksum recomputed" '!/^#/ && $1 == 5 {$5 = 151} {print}' \
  "c.dat:[0-9]*:[0-9]*: point 5's n is '150' in this sweep, the row says '151'" fix
key_case "R edited" '!/^#/ && $1 == 7 {$6 = 2.5} {print}' "point 7's R is '[0-9.]*' in this sweep, the row says '2.5'"
key_case "index out of range" '!/^#/ && $1 == 5 {$1 = 4800} {print}' \
  "c.dat:[0-9]*:1: '4800' is not a point index of this sweep (0..47)"
key_case "index not a number" '!/^#/ && $1 == 5 {$1 = "x5"} {print}' "c.dat:[0-9]*:1: 'x5' is not a point index"
key_case "index moved onto another point" '!/^#/ && $1 == 5 {$1 = 6} {print}' "point 6's"
# --- the lock is the file's own (device and inode): a second sweep through a
# symbolic link, a hard link or another spelling of the path exits 1
"$GFI" sweep --out "$T/held.dat" "${SLOW[@]}" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -s "$T/held.dat.lock" ] && break; sleep 0.05; done
ln -s held.dat "$T/sym.dat"
ln "$T/held.dat" "$T/hard.dat"
for other in sym.dat hard.dat; do
  expect 1 "$other is being written by another sweep (through this or another path to the same file" -- \
    "$GFI" sweep --out "$T/$other" "${SLOW[@]}"
done
expect 1 "held.dat is being written by another sweep" -- "$GFI" sweep --out "$T/./held.dat" "${SLOW[@]}"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
# outputs that cannot be read back: refused before anything is written
mkdir "$T/adir"
mkfifo "$T/fifo" 2>/dev/null || : >"$T/fifo"
expect 1 "/dev/full: not a regular file (a character device)" -- "$GFI" sweep --out /dev/full "${SW[@]}"
expect 1 "adir: not a regular file (a directory)" -- "$GFI" sweep --out "$T/adir" "${SW[@]}"
[ -p "$T/fifo" ] && expect 1 "fifo: not a regular file (a pipe)" -- "$GFI" sweep --out "$T/fifo" "${SW[@]}"

# --- duplicated rows (two writers once shared the file): the copies are dropped
{ cat "$T/full.dat"; grep -v '^#' "$T/full.dat" | head -n 5; } >"$T/d.dat"
"$GFI" sweep --out "$T/d.dat" "${SW[@]}" --threads 1 2>"$T/err" || bad "resume with duplicated rows: $(cat "$T/err")"
[ "$(grep -c "row appears again; the copy is dropped" "$T/err")" -eq 5 ] && ok || bad "duplicates: $(cat "$T/err")"
diff <(rows "$T/full.dat") <(rows "$T/d.dat") >/dev/null && ok || bad "duplicates: the repaired file differs"
# --- a changed digit in a middle row's value: the checksum catches it, the point is computed again
awk '!/^#/ && $1 == 20 {$8 = substr($8, 1, 6) ($8 ~ /^.....[0-8]/ ? "9" : "1") substr($8, 8)} {print}' \
  "$T/full.dat" >"$T/g.dat"
cmp -s "$T/full.dat" "$T/g.dat" && bad "the digit was not changed"
"$GFI" sweep --out "$T/g.dat" "${SW[@]}" --threads 1 2>"$T/err" || bad "resume of a changed digit"
grep -q "g.dat:[0-9]*:[0-9]*: point 20's row does not match its checksum" "$T/err" && ok || bad "digit: $(cat "$T/err")"
diff <(rows "$T/full.dat") <(rows "$T/g.dat") >/dev/null && ok || bad "changed digit: the file was not repaired"
# --- files written before rows had a checksum (11 columns) still resume
awk '/^# index/ {print "# index model dim l n R reps mise se bias2 var"; next} /^#/ {print; next}
  {NF = 11; print}' "$T/full.dat" | head -n -4 >"$T/old.dat"
"$GFI" sweep --out "$T/old.dat" "${SW[@]}" --threads 1 2>"$T/err" || bad "resume of an 11-column file: $(cat "$T/err")"
[ "$(grep -vc '^#' "$T/old.dat")" -eq 48 ] && ok || bad "11-column file: $(grep -vc '^#' "$T/old.dat") rows"
"$GFI" sweep --out "$T/old.dat" "${SW[@]}" --threads 1 2>"$T/err" && [ ! -s "$T/err" ] && ok ||
  bad "second resume of an 11-column file: $(cat "$T/err")"

# --- the header cut inside (in '# grid', before the key, mid column line): written again
keyl=$(grep -n '^# sweep-key' "$T/full.dat" | cut -d: -f1)
colb=$(grep -b '^# index' "$T/full.dat" | cut -d: -f1)
for cut in $(( $(head -n "$keyl" "$T/full.dat" | wc -c) + 10 )) 40 $((colb + 9)); do
  head -c "$cut" "$T/full.dat" >"$T/h.dat"
  "$GFI" sweep --out "$T/h.dat" "${SW[@]}" --threads 1 2>"$T/err" || bad "resume of a header cut at byte $cut"
  grep -q "h.dat: the header is incomplete.*written again" "$T/err" && ok || bad "no message for the cut at $cut: $(cat "$T/err")"
  diff <(grep -v '^# command:\|^# --out:' "$T/full.dat") <(grep -v '^# command:\|^# --out:' "$T/h.dat") >/dev/null && ok ||
    bad "header cut at byte $cut: the file differs from the uninterrupted run"
done
# rows without a header are refused, and so is a file that is not a sweep's
grep -v '^#' "$T/full.dat" >"$T/h.dat"
expect 1 "h.dat:1: a row before the header's '# sweep-key' line" -- "$GFI" sweep --out "$T/h.dat" "${SW[@]}"
printf '# gfi sample\n' >"$T/h.dat"
expect 1 "no '# sweep-key' line: not a gfi sweep file" -- "$GFI" sweep --out "$T/h.dat" "${SW[@]}"

finish "sweep"
