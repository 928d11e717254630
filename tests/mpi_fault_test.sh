#!/usr/bin/env bash
# Failures on one MPI rank end the whole job, with the message and status of
# the serial run: a bad value in each rank's slab of the data (density and
# regress) and an output rank 0 cannot write; and ranks started with
# different arguments (the MPMD form 'mpirun -np 1 A : -np 1 B' with a
# missing file or an extra option on one rank: density, regress, mise --mc,
# sweep), refused at start naming the rank and the argument.
# Every case must end long before its 30 s guard (it ends in about a second;
# the guard only keeps a hang from stalling the suite).
# Second argument: mpirun ('' = gfi has no MPI or no mpirun: skipped).
. "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
MPIRUN=${2:-}
if [ -z "$MPIRUN" ]; then
  echo "SKIP: gfi was built without MPI or mpirun is not installed (Debian: openmpi-bin libopenmpi-dev)"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0:malloc_context_size=30:detect_leaks=0"
supp=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan_mpi.supp
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp"
cd "$T" || exit 1
M=(--oversubscribe --bind-to none)

# fault CODE PATTERN MPIRUN-ARGS...: the job exits CODE within the guard and
# its stderr matches PATTERN
fault() {
  local code=$1 pat=$2
  shift 2
  timeout -k 5 30 "$MPIRUN" "${M[@]}" "$@" >out 2>err
  local rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then bad "hung (killed by the 30 s guard): $*"; return; fi
  if [ "$rc" -ne "$code" ]; then bad "exit $rc, expected $code: $*; $(grep gfi err | head -3)"; return; fi
  grep -q -- "$pat" err && ok || bad "stderr lacks '$pat': $*; $(grep gfi err | head -3)"
  if grep -v '^#' out | grep -qiE '(^|[ ,])[-+]?(nan|inf)'; then bad "NaN or inf on stdout: $*"; fi
}

# three blocks of the file (one per rank at -np 3), about 0.8 MiB each
"$GFI" sample --model normal --dim 2 --n 60000 --seed 4 >d.txt
"$GFI" regress-sample --model normal --dim 1 --truth poly:0,1 --noise gauss:0.1 --n 90000 --seed 4 >r.txt
printf '0 0\n0.5 0.5\n' >q2.txt
printf '0\n0.5\n' >q1.txt
# put(FILE LINE TEXT OUT): FILE with TEXT inserted as line LINE
put() { { head -n $(($2 - 1)) "$1"; echo "$3"; tail -n +"$2" "$1"; } >"$4"; }
for line in 1000 30000 58000; do # in rank 0's, 1's and 2's slab
  put d.txt "$line" "0.5 oops" bad.txt
  fault 1 "bad.txt:$line:2: not a number" -np 3 "$GFI" density --data bad.txt --R 2 --at q2.txt --threads 1
  put d.txt "$line" "0.5 1e300" big.txt
  rows=$(head -n "$line" big.txt | grep -vc '^#')
  fault 2 "--R: .* at the data row $rows, column 2 exceeds 2^52" -np 3 "$GFI" density --data big.txt --R 2 --at q2.txt \
    --threads 1
  put r.txt "$line" "0.5 x" rbad.txt
  fault 1 "rbad.txt:$line:2: not a number" -np 3 "$GFI" regress --data rbad.txt --R 2 --at q1.txt --threads 1
  put r.txt "$line" "1e300 0.5" rbig.txt
  rows=$(head -n "$line" rbig.txt | grep -vc '^#')
  fault 2 "at the data row $rows, column 1 exceeds 2^52" -np 3 "$GFI" regress --data rbig.txt --R 2 --at q1.txt \
    --threads 1
done
# rank 0 failing after the other ranks ended their part (an output it cannot write)
fault 1 "writing /dev/full: No space left" -np 3 "$GFI" density --data d.txt --R 2 --at q2.txt --out /dev/full
# ranks started with different arguments (an MPMD launch 'mpirun -np 1 A : -np 1 B'): refused at start,
# naming the rank and the first argument that differs, before any work or output
A="rank 1 of 2 was started with other arguments than rank 0 (argument"
fault 2 "$A 3: '--data nosuch.txt' on rank 1, '--data d.txt' on rank 0)" -np 1 "$GFI" density --data d.txt --R 2 \
  --at q2.txt : -np 1 "$GFI" density --data nosuch.txt --R 2 --at q2.txt
fault 2 "$A 3: '--data r.txt' on rank 1, '--data nosuch.txt' on rank 0)" -np 1 "$GFI" regress --data nosuch.txt \
  --R 2 --at q1.txt : -np 1 "$GFI" regress --data r.txt --R 2 --at q1.txt
MC=(mise --model normal --dim 1 --n 500 --phi pow:4 --R 2 --mc 7 --seed 3 --threads 1)
fault 2 "$A 16: '--phi' on rank 1, nothing on rank 0)" -np 1 "$GFI" "${MC[@]}" : -np 1 "$GFI" "${MC[@]}" --phi pow:9
fault 2 "$A 16: nothing on rank 1, '--phi' on rank 0)" -np 1 "$GFI" "${MC[@]}" --phi pow:9 : -np 1 "$GFI" "${MC[@]}"
SW=(sweep --out s.dat --model normal --dims 1 --phis 2 --ns 100 --Rs 1,2 --reps 0,20 --seed 1 --threads 1)
fault 2 "$A 13: '--Rs -1' on rank 1, '--Rs 1,2' on rank 0)" -np 1 "$GFI" "${SW[@]}" : -np 1 "$GFI" "${SW[@]/1,2/-1}"
fault 2 "rank 2 of 3 was started with other arguments than rank 0 (argument 18: '--nosuch' on rank 2, nothing" \
  -np 2 "$GFI" "${SW[@]}" : -np 1 "$GFI" "${SW[@]}" --nosuch 1
SW2=("${SW[@]}")
SW2[16]=2 # --seed 2
fault 2 "$A 17: '--seed 2' on rank 1, '--seed 1' on rank 0)" -np 1 "$GFI" "${SW[@]}" : -np 1 "$GFI" "${SW2[@]}"
fault 2 "$A 1: 'pdf' on rank 1, 'sweep' on rank 0)" -np 1 "$GFI" "${SW[@]}" : -np 1 "$GFI" pdf --model normal --at q1.txt
[ ! -e s.dat ] && ok || bad "a refused MPMD sweep wrote its file"
# only --threads and --progress may differ: the rows are the serial run's
"$GFI" "${SW[@]/s.dat/serial.dat}" >/dev/null 2>&1 || bad "serial sweep"
SW3=("${SW[@]}")
SW3[18]=2 # --threads 2
timeout -k 5 60 "$MPIRUN" "${M[@]}" -np 1 "$GFI" "${SW[@]}" : -np 2 "$GFI" "${SW3[@]}" --progress \
  >/dev/null 2>err && ok || bad "MPMD with other --threads/--progress failed: $(grep gfi err | head -2)"
diff <(grep -v '^#' serial.dat | sort -n) <(grep -v '^#' s.dat | sort -n) >/dev/null && ok ||
  bad "MPMD with other --threads/--progress: rows differ from the serial sweep"
finish "mpi-fault"
