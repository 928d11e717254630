# The shell tests' common part, sourced by each as
#   . "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
# It takes the test's first argument as the program under test (GFI; a
# usage message when missing), makes a scratch folder T removed on exit,
# reads GFI_TEST_EXPECT into EXPECT, and defines:
#   ok, bad MESSAGE         count a passed / failed check (bad prints "FAIL: MESSAGE")
#   expect CODE PATTERN -- COMMAND...
#                           COMMAND exits with CODE, its stderr matches PATTERN (grep,
#                           unless empty), a failure says so in exactly one line and a
#                           success writes nothing to stderr; stdout in $T/out
#   run COMMAND...          run into $T/out and $T/err and print the exit status
#   data FILE               FILE without its '#' lines
#   col FILE NAME           column NAME (named by the last '#' line) of FILE's rows
#   within4 A SA B SB       |A - B| < 4 sqrt(SA^2 + SB^2) and SA > 0 (prints z on stderr)
#   finish NAME             print "NAME: P passed, F failed"; true when none failed
set -u
GFI=${1:?usage: $(basename "$0") path/to/program}
EXPECT=${GFI_TEST_EXPECT:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

expect() {
  local code=$1 pat=$2
  shift 3
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then bad "'$*' exited $rc, expected $code; stderr: $(cat "$T/err")"; return; fi
  if [ -n "$pat" ] && ! grep -q -- "$pat" "$T/err"; then bad "'$*' stderr lacks '$pat': $(cat "$T/err")"; return; fi
  # (a sanitized build may add its allocator's warning about a refused terabyte request)
  if [ "$code" -ne 0 ] && [ "$(grep -vc '^==[0-9]*==WARNING: AddressSanitizer failed to allocate' "$T/err")" -ne 1 ]; then
    bad "'$*' should print one line: $(cat "$T/err")"; return; fi
  if [ "$code" -eq 0 ] && [ -s "$T/err" ]; then bad "'$*' wrote to stderr: $(cat "$T/err")"; return; fi
  ok
}

run() { "$@" >"$T/out" 2>"$T/err"; echo $?; }
data() { grep -v '^#' "$1"; }
col() { awk -v c="$2" '/^#/ {n = split(substr($0, 3), h, " "); next} {for (i = 1; i <= n; i++) if (h[i] == c) print $i}' "$1"; }
within4() { awk -v a="$1" -v sa="$2" -v b="$3" -v sb="$4" 'BEGIN { s = sqrt(sa * sa + sb * sb); z = (a - b) / s;
  printf "z = %.2f\n", z > "/dev/stderr"; exit !(sa > 0 && z < 4 && z > -4) }'; }

finish() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
