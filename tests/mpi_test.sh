#!/usr/bin/env bash
# gfi over MPI ranks (mpirun --oversubscribe -np 1, 2, 3 on one machine):
# sweep files equal to the serial one after sorting, a killed MPI sweep that
# resumes serially and under another rank count, the lock against a second
# sweep, mise --mc equal to the serial result to the bit, and density sums
# over data slabs equal for every rank count and to the serial slab route.
# Second argument: mpirun ('' = gfi has no MPI or no mpirun: skipped).
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
MPIRUN=${2:-}
if [ -z "$MPIRUN" ]; then
  echo "SKIP: gfi was built without MPI or mpirun is not installed (Debian: openmpi-bin libopenmpi-dev)"
  exit 77
fi
# as root Open MPI wants these; on 2 cores 3 ranks need --oversubscribe; inside
# containers the shared-memory transport's single-copy mode may be refused
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# in a sanitized build: Open MPI's run-time never frees some of its memory;
# LeakSanitizer is told to ignore stacks through Open MPI (full stacks needed
# to see them: its components are dlopen'ed), gfi's own leaks still count
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0:malloc_context_size=30"
supp=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan_mpi.supp
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp"
mpi() {
  local p=$1
  shift
  "$MPIRUN" --oversubscribe --bind-to none -np "$p" "$@"
}
rows() { grep -v '^#' "$1" | sort -n; }
# mpirun may return before its ranks are gone: wait for FILE's lock to be free
unlocked() {
  for _ in $(seq 1 200); do
    flock -n "$1.lock" true 2>/dev/null && return
    sleep 0.05
  done
}

# --- sweep: -np 1, 2, 3 against the serial file
SW=(--model normal --model laplace --dims 1 --phis 1,2 --ns 150,300 --Rs 1,2,3 --reps 0,150 --seed 9 --threads 1)
"$GFI" sweep --out "$T/serial.dat" "${SW[@]}" || bad "serial sweep"
for p in 1 2 3; do
  mpi "$p" "$GFI" sweep --out "$T/mpi$p.dat" "${SW[@]}" 2>"$T/err" || bad "mpirun -np $p sweep: $(cat "$T/err")"
  diff <(rows "$T/serial.dat") <(rows "$T/mpi$p.dat") >/dev/null && ok || bad "mpirun -np $p: rows differ from serial"
  [ "$(grep -c '^# index' "$T/mpi$p.dat")" -eq 1 ] && ok || bad "mpirun -np $p: header"
done

# --- kill the MPI job mid-way; resume serially, and under another P
# (about 10 s serial, 0.4 s a point: after the first row the kill must land
# long before the last). A kill that lands after the last row (a machine
# loaded enough to hold back this script and mpirun's signal forwarding for
# the whole sweep) proves nothing either way: that try is dropped and the
# kill is tried again on a fresh file; only a sweep never stopped mid-way in
# five tries fails.
SLOW=(--model normal --dims 1 --phis 2,4 --ns 10000,20000 --Rs 1,2,3 --reps 0,500 --seed 2 --threads 1)
# under ASan+UBSan a Monte-Carlo point costs about 25 times as much: a point
# about 12 times smaller keeps a fraction of a second per point (the whole
# section took 21 minutes of the sanitized suite with the full sizes; with
# --ns 1000,2000 --reps 0,100 the sweep took 2.9 s, 0.12 s a point, and
# finished before the kill in five tries of five)
if [ "${GFI_SANITIZE:-none}" != none ]; then
  SLOW=(--model normal --dims 1 --phis 2,4 --ns 2000,4000 --Rs 1,2,3 --reps 0,200 --seed 2 --threads 1)
fi
"$GFI" sweep --out "$T/slow.dat" "${SLOW[@]}" || bad "serial slow sweep"
n=$(grep -vc '^#' "$T/slow.dat")
killed() { # P FILE: start an MPI sweep, kill it after its first row
  local try got
  for try in 1 2 3 4 5; do
    rm -f "$2"
    # exec: $! is mpirun itself (a backgrounded function would be a subshell
    # whose death leaves mpirun running)
    (exec "$MPIRUN" --oversubscribe --bind-to none -np "$1" "$GFI" sweep --out "$2" "${SLOW[@]}" >/dev/null 2>&1) &
    local pid=$!
    for _ in $(seq 1 1200); do
      [ -f "$2" ] && [ "$(grep -vc '^#' "$2")" -ge 1 ] && break
      sleep 0.05
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    unlocked "$2"
    got=$(grep -vc '^#' "$2")
    [ "$got" -lt "$n" ] && { ok; return; }
    echo "# -np $1: the kill landed after the last row (try $try); trying again" >&2
  done
  bad "the MPI sweep was never stopped by the kill in five tries ($got of $n rows)"
}
killed 2 "$T/k1.dat"
printf '3 normal 1 2 20' >>"$T/k1.dat" # and a partial last line
"$GFI" sweep --out "$T/k1.dat" "${SLOW[@]}" 2>"$T/err" || bad "serial resume of a killed MPI sweep: $(cat "$T/err")"
diff <(rows "$T/slow.dat") <(rows "$T/k1.dat") >/dev/null && ok || bad "killed -np 2, resumed serially: rows differ"
killed 3 "$T/k2.dat"
mpi 2 "$GFI" sweep --out "$T/k2.dat" "${SLOW[@]}" 2>"$T/err" || bad "-np 2 resume of a killed -np 3 sweep: $(cat "$T/err")"
diff <(rows "$T/slow.dat") <(rows "$T/k2.dat") >/dev/null && ok || bad "killed -np 3, resumed with -np 2: rows differ"
[ "$(grep -v '^#' "$T/k2.dat" | awk '{print $1}' | sort -n | uniq -d | wc -l)" -eq 0 ] && ok || bad "duplicated points"

# --- the lock: an MPI sweep holds FILE; a serial and an MPI second sweep exit 1
# (a sweep of 600 Monte-Carlo points, a minute of work or more, is
# killed once both have been refused: it cannot finish and free the lock first)
Rs=$(seq -s, 1 30)
reps=$(seq -s, 500 519)
HELD=(--model normal --dims 1 --phis 2 --ns 20000 --Rs "$Rs" --reps "$reps" --seed 2 --threads 1)
[ "${GFI_SANITIZE:-none}" != none ] && reps=$(seq -s, 100 119) &&
  HELD=(--model normal --dims 1 --phis 2 --ns 2000 --Rs "$Rs" --reps "$reps" --seed 2 --threads 1)
(exec "$MPIRUN" --oversubscribe --bind-to none -np 2 "$GFI" sweep --out "$T/lock.dat" "${HELD[@]}" >/dev/null 2>&1) &
pid=$!
for _ in $(seq 1 1200); do [ -s "$T/lock.dat.lock" ] && break; sleep 0.05; done
expect 1 "lock.dat is being written by another sweep (pid [0-9]* on .*MPI rank 0" -- "$GFI" sweep --out "$T/lock.dat" "${HELD[@]}"
mpi 2 "$GFI" sweep --out "$T/lock.dat" "${HELD[@]}" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "being written by another sweep" "$T/err" && ok || bad "MPI sweep on a locked file: rc $rc, $(cat "$T/err")"
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
unlocked "$T/lock.dat"

# --- a point that fails on some rank: exit 1 naming the point, the rank and why; the file resumes
FAILS=(--model normal --dims 1 --phis 2 --ns 100 --Rs 1,2,1e300 --reps 0,20 --seed 1 --threads 1)
mpi 2 "$GFI" sweep --out "$T/f.dat" "${FAILS[@]}" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "point 5 (normal, D = 1, l = 2, N = 100, R = 1e+300, reps = 20) failed on rank [01]: .*f.dat holds every point finished before it and resumes" "$T/err" && ok ||
  bad "a failing point under MPI: rc $rc, $(cat "$T/err")"
unlocked "$T/f.dat"
expect 1 "point 5 (normal, D = 1, l = 2, N = 100, R = 1e+300, reps = 20)" -- "$GFI" sweep --out "$T/f.dat" "${FAILS[@]}"
[ "$(grep -v '^#' "$T/f.dat" | awk '{print $1}' | sort -n | uniq -d | wc -l)" -eq 0 ] && ok || bad "duplicated points after a failure"

# --- mise --mc: the serial numbers to the bit
for args in "--model normal --dim 1 --n 500 --phi pow:4 --R 2 --mc 7 --seed 3" \
  "--model normal --dim 2 --n 300 --phi pow:2 --R 2 --mc 5 --seed 3 --method direct" \
  "--model mw:3 --dim 1 --n 3000 --phi pow:4 --R 3 --mc 9 --seed 1 --method fast"; do
  # shellcheck disable=SC2086
  "$GFI" mise $args --threads 2 | grep -v '^#' >"$T/a" || bad "serial mise $args"
  for p in 2 3; do
    # shellcheck disable=SC2086
    mpi "$p" "$GFI" mise $args --threads 1 >"$T/b" 2>"$T/err" || bad "mpirun -np $p mise $args: $(cat "$T/err")"
    cmp -s "$T/a" <(grep -v '^#' "$T/b") && ok || bad "mpirun -np $p mise $args: $(grep -v '^#' "$T/b") vs $(cat "$T/a")"
    grep -q "^# mpi: $p ranks" "$T/b" && ok || bad "no '# mpi:' line"
  done
done

# --- density sums over data slabs: every P the same to the bit (blocks of the
# file, added in block order), within rounding of the one-process sum
"$GFI" sample --model normal --dim 2 --n 60000 --seed 4 >"$T/d.txt" || bad "sample"
"$GFI" sample --model normal --dim 2 --n 60000 --seed 4 --out "$T/d.npy" >/dev/null || bad "sample .npy"
"$GFI" sample --model normal --dim 2 --n 9 --seed 5 | grep -v '^#' >"$T/q.txt"
close() { # A B: equal within 1e-12 relative, row by row
  paste "$1" "$2" | awk '{d = $3 - $6; if (d < 0) d = -d; if (d > 1e-12 * ($3 < 0 ? -$3 : $3) || $1 != $4) bad = 1}
    END {exit bad}'
}
for f in d.txt d.npy; do
  for route in "--at $T/q.txt --method direct" "--grid -2:2:5 --method auto"; do
    # shellcheck disable=SC2086
    "$GFI" density --data "$T/$f" --phi pow:4 --R 2 $route --threads 2 | grep -v '^#' >"$T/s" || bad "serial density $f"
    for p in 1 2 3; do
      # shellcheck disable=SC2086
      mpi "$p" "$GFI" density --data "$T/$f" --phi pow:4 --R 2 $route --threads 1 >"$T/m$p" 2>"$T/err" ||
        bad "mpirun -np $p density $f $route: $(cat "$T/err")"
      grep -q "^# mpi: $p ranks; the data in [0-9]* blocks" "$T/m$p" && ok || bad "density $f: no '# mpi:' line"
      grep -v '^#' "$T/m$p" >"$T/mp"
      [ "$(wc -l <"$T/mp")" -eq "$(wc -l <"$T/s")" ] && ok || bad "density $f -np $p: row count"
      [ "$p" -eq 1 ] && cp "$T/mp" "$T/m1rows"
      cmp -s "$T/m1rows" "$T/mp" && ok || bad "density $f $route: -np $p differs from -np 1"
      close "$T/s" "$T/mp" && ok || bad "density $f $route -np $p: not the serial sum within 1e-12"
    done
  done
done
# regression: the numerators and the denominator of every block, added in block order
"$GFI" regress-sample --model normal --truth poly:1,2,3 --noise gauss:0.5 --dim 1 --n 60000 --seed 3 >"$T/r.txt"
"$GFI" regress-sample --model normal --truth poly:1,2,3 --noise gauss:0.5 --dim 1 --n 60000 --seed 3 \
  --out "$T/r.npy" >/dev/null
for f in r.txt r.npy; do
  kerns=("--phi pow:4 --R 3")
  # the odd power (signed kernel) and the Gaussian kernel on one of the two files
  [ "$f" = r.npy ] && kerns+=("--phi pow:3 --R 3" "--kernel gauss --bandwidth 0.2")
  for kern in "${kerns[@]}"; do
    # shellcheck disable=SC2086
    "$GFI" regress --data "$T/$f" $kern --grid -3:3:13 --method direct | grep -v '^#' >"$T/s" || bad "serial regress"
    for p in 1 2 3; do
      # shellcheck disable=SC2086
      mpi "$p" "$GFI" regress --data "$T/$f" $kern --grid -3:3:13 --threads 1 >"$T/m$p" 2>"$T/err" ||
        bad "mpirun -np $p regress $f $kern: $(cat "$T/err")"
      grep -q "^# mpi: $p ranks; the data in [0-9]* blocks" "$T/m$p" && ok || bad "regress $f: no '# mpi:' line"
      grep -v '^#' "$T/m$p" | awk '{print $1, 0, $2}' >"$T/mp"
      [ "$p" -eq 1 ] && cp "$T/mp" "$T/m1rows"
      cmp -s "$T/m1rows" "$T/mp" && ok || bad "regress $f $kern: -np $p differs from -np 1"
      close <(awk '{print $1, 0, $2}' "$T/s") "$T/mp" && ok || bad "regress $f $kern -np $p: not the serial NW within 1e-12"
    done
  done
done

# what needs all the data (weights) runs on rank 0 alone: one output
awk '!/^#/ {print 1}' "$T/d.txt" >"$T/w.txt"
mpi 2 "$GFI" density --data "$T/d.txt" --weights "$T/w.txt" --phi pow:4 --R 2 --at "$T/q.txt" >"$T/m" 2>"$T/err" ||
  bad "weighted density under MPI: $(cat "$T/err")"
[ "$(grep -vc '^#' "$T/m")" -eq 9 ] && ok || bad "weighted density under MPI: $(grep -vc '^#' "$T/m") rows"
# a bad value in some rank's slab: exit 1 naming the file, its own line and the column
# (tests/mpi_fault_test.sh puts one in each rank's slab)
{ head -n 40000 "$T/d.txt"; echo "0.5 oops"; tail -n +40001 "$T/d.txt"; } >"$T/bad.txt"
mpi 3 "$GFI" density --data "$T/bad.txt" --phi pow:4 --R 2 --at "$T/q.txt" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "data file .*bad.txt:40001:2: not a number" "$T/err" && ok ||
  bad "bad value in a slab: rc $rc, $(cat "$T/err")"

finish "mpi"
