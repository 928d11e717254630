#!/bin/bash
# A program outside the tree (consumer.c) compiled and run against gfi the
# way users get it, through pkg-config:
#   1. the build tree: build/meson-uninstalled/gfi-uninstalled.pc;
#   2. an installed copy: meson install --destdir into a temporary folder,
#      gfi.pc found there, its paths moved by PKG_CONFIG_SYSROOT_DIR.
# Both ways the public headers must be <gfi/...> and the internal ones out
# of reach. Usage: consumer_test.sh BUILD_ROOT SOURCE_ROOT MESON CC [CC ARGS...]
# Exit 77 (skip) without pkg-config.
set -u
build=$1 src=$2 meson=$3
shift 3
cc=("$@")
unset LD_LIBRARY_PATH   # meson test points it at the build tree; each way sets its own
# A sanitized libgfi needs a sanitized program (GFI_SANITIZE: meson's b_sanitize).
case "${GFI_SANITIZE:-none}" in none|'') ;; *) cc+=("-fsanitize=$GFI_SANITIZE");; esac
command -v pkg-config >/dev/null 2>&1 || { echo "pkg-config not found: skipped"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# try NAME: compile and run the consumer with the flags pkg-config gives.
try() {
  local name=$1 cflags libs libdirs
  if ! cflags=$(pkg-config --cflags gfi) || ! libs=$(pkg-config --libs gfi); then
    echo "FAIL ($name): pkg-config cannot resolve gfi"; fail=1; return
  fi
  echo "$name: cflags: $cflags"
  echo "$name: libs:   $libs"
  # shellcheck disable=SC2086
  if ! "${cc[@]}" -std=c11 -Wall -Werror $cflags "$src/tests/consumer/consumer.c" -o "$tmp/consumer_$name" $libs -lm; then
    echo "FAIL ($name): the consumer does not compile and link"; fail=1; return
  fi
  libdirs=$(pkg-config --libs-only-L gfi | sed 's/-L//g; s/ \+/:/g; s/:$//')
  if ! LD_LIBRARY_PATH="$libdirs" "$tmp/consumer_$name"; then
    echo "FAIL ($name): the consumer fails"; fail=1
  fi
  # Which libgfi it ran against: the one this way provides.
  local used
  used=$(LD_LIBRARY_PATH="$libdirs" ldd "$tmp/consumer_$name" 2>/dev/null | awk '/libgfi\.so/ {print $3}')
  echo "$name: runs against $used"
  case "$used" in "$want_lib"*) ;; *) echo "FAIL ($name): libgfi from $used, expected under $want_lib"; fail=1;; esac
  # Internal headers and the public ones without their gfi/ are not on the path.
  local h
  for h in engine.h nufft.h mise_internal.h model_internal.h status.h gfi_version.h \
           estimators/engine.h lib/nufft.h include/gfi/gfi.h; do
    # shellcheck disable=SC2086
    if printf '#include <%s>\nint main(void) { return 0; }\n' "$h" |
       "${cc[@]}" -std=c11 $cflags -x c -fsyntax-only - 2>/dev/null; then
      echo "FAIL ($name): <$h> is reachable with gfi's cflags"; fail=1
    fi
  done
}

# 1. The build tree.
[ -f "$build/meson-uninstalled/gfi-uninstalled.pc" ] || { echo "FAIL: no gfi-uninstalled.pc"; exit 1; }
want_lib=$build/
PKG_CONFIG_PATH="$build/meson-uninstalled" try uninstalled

# 2. An installed copy (no rebuild: the suite runs on a built tree).
dest=$tmp/dest
if ! "$meson" install -C "$build" --no-rebuild --destdir "$dest" >"$tmp/install.log" 2>&1; then
  if [ $fail = 0 ] && grep -q 'could not be found' "$tmp/install.log"; then
    # meson test --no-rebuild on a partly built tree: nothing to install from.
    echo "installed: skipped, the build tree lacks targets meson install needs:"
    grep 'could not be found' "$tmp/install.log"
    exit 77
  fi
  echo "FAIL: meson install --destdir"; cat "$tmp/install.log"; exit 1
fi
pc=$(find "$dest" -name gfi.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || { echo "FAIL: meson install put no gfi.pc under $dest"; exit 1; }
[ -f "$(dirname "$pc")/../../../include/gfi/gfi.h" ] || [ -n "$(find "$dest" -path '*/include/gfi/gfi.h')" ] ||
  { echo "FAIL: no include/gfi/gfi.h installed"; exit 1; }
if find "$dest" -path '*/include/*' -name '*internal*.h' | grep -q .; then
  echo "FAIL: internal headers installed:"; find "$dest" -path '*/include/*' -name '*internal*.h'; fail=1
fi
want_lib=$dest/
PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest" try installed

exit $fail
