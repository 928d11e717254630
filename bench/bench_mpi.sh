#!/usr/bin/env bash
# Strong scaling of gfi sweep over MPI ranks on one machine, and the cost of
# the MPI bookkeeping per point.
#   bench/bench_mpi.sh path/to/gfi [mpirun] [--quick]
# 1. The same sweep (points of very different cost: exact MISE and Monte
#    Carlo with N up to 2e4) as one process with 2 threads (--threads 2) and
#    as 2 ranks with 1 thread each (mpirun -np 2 ... --threads 1): wall times
#    and their ratio; the two files hold the same rows.
# 2. Bookkeeping: a grid of cheap points (exact MISE, a few milliseconds
#    each) serially on 1 thread and on 2 ranks x 1 thread; the MPI sweep
#    reports the mean time a rank waits from returning a point to receiving
#    the next (the hand-out's round trip through rank 0).
# 1 x 2 is also timed with OMP_WAIT_POLICY=passive: on a machine with more
# runnable threads than cores, OpenMP's spinning waits cost a great deal.
# Timings on a shared machine are noisy: the load average is printed with them.
set -u
GFI=${1:?usage: bench_mpi.sh path/to/gfi [mpirun] [--quick]}
MPIRUN=${2:-$(command -v mpirun || true)}
QUICK=${3:-}
if [ -z "$MPIRUN" ]; then
  echo "mpirun not found: skipped"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }
rows() { grep -v '^#' "$1" | sort -n; }
echo "# gfi bench mpi: $("$GFI" --version 2>/dev/null | head -n 1); $("$MPIRUN" --version 2>/dev/null | head -n 1)"
echo "# machine: $(nproc) cores, $(uname -m); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$QUICK" = --quick ]; then
  SW=(--model normal --model laplace --dims 1 --phis 2,4 --ns 2000,8000 --Rs 1,2,3 --reps 0,20 --seed 1)
else
  SW=(--model normal --model laplace --dims 1 --phis 2,4 --ns 5000,20000 --Rs 1,2,3 --reps 0,60 --seed 1)
fi
a=$(now)
"$GFI" sweep --out "$T/t2.dat" "${SW[@]}" --threads 2 2>/dev/null || exit 1
b=$(now)
OMP_WAIT_POLICY=passive "$GFI" sweep --out "$T/p2.dat" "${SW[@]}" --threads 2 2>/dev/null || exit 1
b2=$(now)
"$MPIRUN" --oversubscribe --bind-to none -np 2 "$GFI" sweep --out "$T/r2.dat" "${SW[@]}" --threads 1 2>/dev/null || exit 1
c=$(now)
n=$(grep -vc '^#' "$T/t2.dat")
same=$(diff <(rows "$T/t2.dat") <(rows "$T/r2.dat") >/dev/null && echo yes || echo NO)
w1=$(secs "$a" "$b")
wp=$(secs "$b" "$b2")
w2=$(secs "$b2" "$c")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "sweep of $n points: 1 rank x 2 threads ${w1} s (OMP_WAIT_POLICY=passive: ${wp} s), 2 ranks x 1 thread" \
  "${w2} s; ratio (1x2)/(2x1) = $(ratio "$w1" "$w2") (passive: $(ratio "$wp" "$w2")); rows equal: $same"

# the bookkeeping as the ranks see it: the sweep reports how long a rank
# waited from returning a point to receiving its next one
CH=(--model normal --dims 1 --phis 1,2,4 --ns 100,200,300,400,500,600,700,800,900,1000 --Rs 0.5,1,1.5,2,2.5,3,4,5
  --reps 0 --seed 1)
a=$(now)
"$GFI" sweep --out "$T/c1.dat" "${CH[@]}" --threads 1 2>/dev/null || exit 1
b=$(now)
"$MPIRUN" --oversubscribe --bind-to none -np 2 "$GFI" sweep --out "$T/c2.dat" "${CH[@]}" --threads 1 2>"$T/err" || exit 1
c=$(now)
n=$(grep -vc '^#' "$T/c1.dat")
t1=$(secs "$a" "$b")
t2=$(secs "$b" "$c")
echo "cheap points: $n exact-MISE points: serial 1 thread ${t1} s ($(awk -v t="$t1" -v n="$n" \
  'BEGIN {printf "%.2f", 1e3 * t / n}') ms/point); 2 ranks x 1 thread ${t2} s (MPI start-up included)"
grep 'bookkeeping' "$T/err" | sed 's/^gfi sweep: /bookkeeping: /'
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
