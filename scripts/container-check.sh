#!/bin/sh
# The container recipe, checked: in a CI image that has an upstream Mooncake
# source tree with its build tree (MOONCAKE_PREFIX), build libmcgo_native.so
# against it, run both conformance suites against a loopback cluster with
# the library loaded at run time, then build a Go service with plain
# `go build` (no tag, no upstream needed at build time) and run it on that
# Mooncake. make container-check runs it; docs/container.md explains each
# step. Everything listens on 127.0.0.1; the master is stopped by its PID.
#
#   MOONCAKE_PREFIX   upstream source tree with its build in <tree>/build (required)
#   BUILD             the project's build directory (default build)
#   OUT               where the library and the service go (default $BUILD/container)
set -eu
cd "$(dirname "$0")/.."
: "${MOONCAKE_PREFIX:?MOONCAKE_PREFIX=<upstream source tree with its build in <tree>/build>}"
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/container}
GO=${GO:-go}
say() { echo "container-check: $*"; }

say "1/4 libmcgo_native.so against $MOONCAKE_PREFIX"
make --no-print-directory native MOONCAKE_PREFIX="$MOONCAKE_PREFIX" BUILD="$BUILD"
mkdir -p "$OUT/lib" "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
cp "$BUILD/native/libmcgo_native.so" "$OUT/lib/"
LIB=$OUT/lib/libmcgo_native.so

# run LOG CMD...: CMD's output goes to LOG; its last line is shown, and all
# of it if CMD fails.
run() {
  log=$1; shift
  if "$@" >"$log" 2>&1; then tail -1 "$log"; else tail -30 "$log"; say "failed (log $log)"; exit 1; fi
}

say "2/4 the conformance suites: one test binary per package, built once with plain go test -c, run on the embedded engine and with the library loaded"
for pkg in mooncake mooncake/transfer; do
  name=$(echo "$pkg" | tr / -)
  bin=$OUT/bin/$name.test
  $GO test -c -o "$bin" "./$pkg/"
  say "$name.test on the embedded engine"
  run "$OUT/$name-embedded.log" sh -c "cd $pkg && exec $bin -test.count=1 -test.run '^TestConformance\$'"
  say "$name.test with $LIB"
  run "$OUT/$name-native.log" env MCGO_NATIVE_LIBRARY="$LIB" MOONCAKE_PREFIX="$MOONCAKE_PREFIX" MCGO_REQUIRE_UPSTREAM=1 MCGO_TEST_ISOLATED=1 \
    $GO run ./scripts/cluster -- sh -c "cd $pkg && exec $bin -test.count=1 -test.run '^TestConformance\$'"
done

say "3/4 a Go service built with plain go build (CGO_ENABLED=1, no tag)"
$GO build -o "$OUT/bin/service" ./cmd/mooncake-demo
if nm -D "$OUT/bin/service" 2>/dev/null | grep -q ' U mcgo_'; then
  echo "container-check: the service links mcgo_ symbols dynamically; it should not" >&2; exit 1
fi

say "4/4 the service on the embedded engine, then on this Mooncake"
"$OUT/bin/service" -objects 16 -pages 8 | grep 'backend embedded'
MCGO_NATIVE_LIBRARY="$LIB" MOONCAKE_PREFIX="$MOONCAKE_PREFIX" \
  $GO run ./scripts/cluster -- "$OUT/bin/service" -objects 16 -pages 8 | tee "$OUT/service-native.log"
grep -q 'backend native' "$OUT/service-native.log"
say "passed: $LIB and $OUT/bin/service"
