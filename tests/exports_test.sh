#!/bin/bash
# libgfi.so exports gfi's public interface and nothing else:
#   1. every dynamic symbol it defines starts with gfi_;
#   2. every function or variable a public header declares (at the start of a
#      line, outside typedefs) carries GFI_EXPORT;
#   3. the exported names are exactly the GFI_EXPORT declarations of
#      include/gfi/*.h (none missing: declared but hidden or not defined;
#      none extra: exported without a public declaration).
#   4. no public header is left outside include/gfi/ (lib/gfi/, estimators/gfi/
#      were the folders before); gfi.h includes every one and
#      include/meson.build installs every one.
# Usage: exports_test.sh LIBGFI_SO INCLUDE_GFI_DIR [SOURCE_ROOT]. Exit 77
# (skip) without nm.
set -u
lib=$1; hdr=$2; src=${3:-}
command -v nm >/dev/null 2>&1 || { echo "nm not found: skipped"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: no $lib"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

nm -D --defined-only "$lib" | awk 'NF >= 2 {print $NF}' | sed 's/@.*//' | sort -u > "$tmp/exported"
total=$(wc -l < "$tmp/exported")
if [ "$total" -eq 0 ]; then echo "FAIL: nm -D lists no symbols in $lib"; exit 1; fi
grep -v '^gfi_' "$tmp/exported" > "$tmp/bad"
if [ -s "$tmp/bad" ]; then
  echo "FAIL: $(wc -l < "$tmp/bad") exported symbols outside gfi_*:"; sed 's/^/  /' "$tmp/bad"; fail=1
fi

# Declarations of gfi_ functions (and extern variables) without GFI_EXPORT.
awk '/^[A-Za-z_]/ && !/^(GFI_EXPORT|typedef|extern "C")/ &&
     (/(^|[^A-Za-z0-9_])gfi_[A-Za-z0-9_]*[ \t]*\(/ || /^extern .*gfi_[A-Za-z0-9_]*[ \t]*;/) {
       print FILENAME ":" FNR ": " $0 }' "$hdr"/*.h > "$tmp/unmarked"
if [ -s "$tmp/unmarked" ]; then
  echo "FAIL: public declarations without GFI_EXPORT:"; sed 's/^/  /' "$tmp/unmarked"; fail=1
fi

# The name each GFI_EXPORT declaration declares: the last identifier before
# its first '(' (functions) or its ';' (variables).
awk '/^GFI_EXPORT /{s = ""; on = 1}
     on {s = s " " $0
         if ($0 ~ /;/) {on = 0; sub(/\(.*/, "", s); sub(/;.*/, "", s)
                        n = split(s, a, /[^A-Za-z0-9_]+/); while (n > 0 && a[n] == "") n--
                        print a[n]}}' "$hdr"/*.h | sort -u > "$tmp/declared"
comm -23 "$tmp/declared" "$tmp/exported" > "$tmp/missing"
comm -13 "$tmp/declared" "$tmp/exported" | grep '^gfi_' > "$tmp/extra"
if [ -s "$tmp/missing" ]; then
  echo "FAIL: declared GFI_EXPORT in include/gfi but not exported by $lib:"; sed 's/^/  /' "$tmp/missing"; fail=1
fi
if [ -s "$tmp/extra" ]; then
  echo "FAIL: exported by $lib but not declared GFI_EXPORT in include/gfi:"; sed 's/^/  /' "$tmp/extra"; fail=1
fi
if [ -n "$src" ]; then
  stray=$(ls "$src"/lib/gfi/*.h "$src"/estimators/gfi/*.h 2>/dev/null)
  if [ -n "$stray" ]; then
    echo "FAIL: public headers outside include/gfi/ (not installed, not in gfi.h):"; echo "$stray" | sed 's/^/  /'; fail=1
  fi
fi
for h in "$hdr"/*.h; do
  b=$(basename "$h")
  [ "$b" = gfi.h ] && continue
  grep -q "^#include \"$b\"" "$hdr/gfi.h" || { echo "FAIL: gfi.h does not include $b"; fail=1; }
  grep -q "'gfi/$b'" "$hdr/../meson.build" || { echo "FAIL: include/meson.build does not install $b"; fail=1; }
done
echo "exported: $total symbols; GFI_EXPORT declarations: $(wc -l < "$tmp/declared")"
exit $fail
