#!/bin/bash
# No cycles between the files of estimators/ (or of lib/): an edge A -> B when A.o
# references (nm: undefined) a symbol that B.o defines; a cycle is a set of
# files each reaching the others along such edges (a strongly connected
# component of more than one file). A file that needs another's function
# and is needed by it belongs with it, or the shared piece in a file of its
# own (docs/architecture.md, "The source layout").
# Usage: cycles_test.sh LIBGFI_A [FOLDER]. The objects are the members of
# the static library whose names hold FOLDER_ (default estimators: meson
# names them .._estimators_FILE.c.o). Prints the edges with -v as a third
# argument. Exit 77 (skip) without nm.
set -u
lib=$1; folder=${2:-estimators}; verbose=${3:-}
command -v nm >/dev/null 2>&1 || { echo "nm not found: skipped"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: no $lib"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# "file kind symbol" for every global symbol of the folder's members: kind U
# (undefined) or D (defined in that member).
nm -A "$lib" 2>/dev/null | awk -v pat="_${folder}_" '
  { split($1, p, ":"); m = p[2]; if (index(m, pat) == 0) next
    sub(".*" pat, "", m); sub(/\.o$/, "", m)
    if (NF == 3 && $2 ~ /^[A-Z]$/ && $2 != "U") print m, "D", $3
    else if ($(NF - 1) == "U") print m, "U", $NF }' > "$tmp/syms"
nfiles=$(awk '{print $1}' "$tmp/syms" | sort -u | wc -l)
if [ "$nfiles" -lt 2 ]; then echo "FAIL: nm found no $folder objects in $lib"; exit 1; fi

awk '$2 == "D" {def[$3] = $1} $2 == "U" {use[NR] = $1 " " $3}
     END {for (k in use) {split(use[k], a, " "); if ((a[2] in def) && def[a[2]] != a[1])
                            print a[1], def[a[2]], a[2]}}' "$tmp/syms" | sort -u > "$tmp/edges_sym"
awk '{print $1, $2}' "$tmp/edges_sym" | sort -u > "$tmp/edges"
if [ -n "$verbose" ]; then
  awk '{e[$1 " -> " $2] = e[$1 " -> " $2] " " $3} END {for (k in e) print k ":" e[k]}' "$tmp/edges_sym" | sort
fi

# The transitive closure (Warshall) over the files; a pair reaching each
# other is in a cycle. Each cycle is printed once, as its files and the
# symbols of its edges.
awk 'NR == FNR {n[$1]; n[$2]; r[$1, $2] = 1; next}
     {s[$1, $2] = s[$1, $2] " " $3}
     END {
       for (k in n) for (i in n) if (r[i, k]) for (j in n) if (r[k, j]) r[i, j] = 1
       bad = 0
       for (i in n) {
         if (i in done) continue
         c = i; done[i] = 1
         for (j in n) if (j != i && r[i, j] && r[j, i]) {c = c " " j; done[j] = 1}
         if (c == i) continue
         bad++
         print "FAIL: cycle between " c
         m = split(c, f, " ")
         for (a = 1; a <= m; a++) for (b = 1; b <= m; b++)
           if (a != b && ((f[a], f[b]) in s)) print "  " f[a] " -> " f[b] ":" s[f[a], f[b]]
       }
       exit bad > 0
     }' "$tmp/edges" "$tmp/edges_sym"
st=$?
echo "$folder: $nfiles files, $(wc -l < "$tmp/edges") edges, $( [ $st = 0 ] && echo "no cycles" || echo "cycles")"
exit $st
