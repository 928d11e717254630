#!/usr/bin/env bash
# The commands of README.md and docs/usage.md run as written.
#   docs_commands_test.sh SOURCE_ROOT BUILD_ROOT [CC ...]
# Every fenced block of each page is read in order:
#   ```sh            run (one bash per page, set -euo pipefail, in a fresh
#                    directory where build/ is the build tree)
#   ```sh skip       not run: too long for a test (the block says why); listed
#   ```c file=NAME   written to NAME for the blocks after it
# A page with no runnable block fails (the extraction itself is tested).
set -euo pipefail
src=$(cd "$1" && pwd)
bld=$(cd "$2" && pwd)
shift 2
cc_cmd=("$@")
[ ${#cc_cmd[@]} -gt 0 ] || cc_cmd=(cc)
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}  # short parallel regions on a shared machine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
for page in README.md docs/usage.md; do
  dir="$work/$(basename "$page" .md)"
  mkdir -p "$dir"
  ln -s "$bld" "$dir/build"
  # the extracted script: runnable blocks in order, C files written with cat
  awk -v dir="$dir" -v page="$page" '
    function flush_c() { close(cfile) }
    /^```/ {
      if (!inb) {
        inb = 1
        info = substr($0, 4)
        kind = "other"
        if (info == "sh") kind = "run"
        else if (info == "sh skip") kind = "skip"
        else if (info ~ /^c file=[A-Za-z0-9_.-]+$/) { kind = "c"; cfile = dir "/" substr(info, 8); printf "" > cfile }
        start = NR
        if (kind == "run") { nrun++; printf "echo \"--- %s:%d\" >&2\n", page, NR }
        if (kind == "skip") nskip++
        next
      } else {
        if (kind == "c") flush_c()
        if (kind == "skip") printf "echo \"--- %s:%d skipped: %s\" >&2\n", page, start, why
        inb = 0; why = ""
        next
      }
    }
    inb && kind == "run" { print }
    inb && kind == "c" { print > cfile }
    inb && kind == "skip" && why == "" && /^# / { why = substr($0, 3) }
    END { printf "echo \"%s: %d blocks run, %d skipped\" >&2\n", page, nrun, nskip
          if (nrun == 0) print "echo \"no runnable block found\" >&2; exit 1" }
  ' "$src/$page" > "$dir/run.sh"
  # cc as the page writes it, with the build's compiler and sanitizer flags
  san=${GFI_SANITIZE:-none}
  {
    echo "set -euo pipefail"
    printf 'cc() { command'
    printf ' %q' "${cc_cmd[@]}"
    if [ "$san" != none ] && [ -n "$san" ]; then printf ' -fsanitize=%q' "$san"; fi
    printf ' "$@"; }\n'
    cat "$dir/run.sh"
  } > "$dir/script.sh"
  if ! (cd "$dir" && bash "$dir/script.sh" > "$dir/stdout.txt" 2> "$dir/stderr.txt"); then
    echo "FAIL: a command of $page failed; its output:" >&2
    tail -n 30 "$dir/stderr.txt" >&2
    status=1
  else
    grep -E '^(---|[A-Za-z/.]+\.md:)' "$dir/stderr.txt" >&2 || true
  fi
done
exit $status
