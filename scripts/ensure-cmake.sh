#!/bin/sh
# Prints the path of a usable cmake (>= 3.18, the minimum of CMakeLists.txt)
# on stdout. If none is on PATH, installs Debian/Ubuntu's cmake package with
# apt-get (needs root). Anything else goes to stderr. Exits 1, saying exactly
# what is missing, when no usable cmake can be provided.
#
#   CMAKE=$(scripts/ensure-cmake.sh) || exit 1
set -u

MIN_MAJOR=3
MIN_MINOR=18

log() { echo "ensure-cmake: $*" >&2; }

# usable PATH_TO_CMAKE -> 0 when its version is >= MIN
usable() {
  v=$("$1" --version 2>/dev/null | sed -n 's/^cmake version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -n 1)
  [ -n "$v" ] || return 1
  major=${v% *}
  minor=${v#* }
  [ "$major" -gt "$MIN_MAJOR" ] && return 0
  [ "$major" -eq "$MIN_MAJOR" ] && [ "$minor" -ge "$MIN_MINOR" ]
}

find_cmake() {
  p=$(command -v cmake 2>/dev/null) || return 1
  usable "$p" || return 1
  # ctest comes with cmake; the Makefile needs both.
  command -v ctest >/dev/null 2>&1 || return 1
  echo "$p"
}

if p=$(find_cmake); then
  echo "$p"
  exit 0
fi

if p=$(command -v cmake 2>/dev/null); then
  log "found $p but it is older than $MIN_MAJOR.$MIN_MINOR (or ctest is missing): $("$p" --version 2>/dev/null | head -n 1)"
else
  log "no cmake on PATH"
fi

if ! command -v apt-get >/dev/null 2>&1; then
  log "missing: cmake >= $MIN_MAJOR.$MIN_MINOR (with ctest). apt-get is not available here;"
  log "install cmake with your package manager or from https://cmake.org/download/ and put it on PATH."
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  log "missing: cmake >= $MIN_MAJOR.$MIN_MINOR (with ctest). Installing it needs root; run as root:"
  log "  apt-get update && apt-get install -y cmake"
  exit 1
fi

log "no usable cmake: installing Debian's cmake package now (apt-get update && apt-get install -y cmake)"
if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
       DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake >&2; }; then
  log "missing: cmake >= $MIN_MAJOR.$MIN_MINOR (with ctest). 'apt-get install -y cmake' failed (see above)."
  exit 1
fi

if p=$(find_cmake); then
  echo "$p"
  exit 0
fi
if p=$(command -v cmake 2>/dev/null); then
  log "missing: cmake >= $MIN_MAJOR.$MIN_MINOR (with ctest). apt-get installed $("$p" --version 2>/dev/null | head -n 1), which is too old (or ctest is missing)."
else
  log "missing: cmake >= $MIN_MAJOR.$MIN_MINOR (with ctest). apt-get succeeded but no cmake is on PATH ($PATH)."
fi
exit 1
