#!/bin/sh
# The C floor (cgo/bench/mcbench_c.cc) against the embedded engine: it must
# answer every case of a small plan, measure the single-call, zero-copy
# batch and multi-buffer ones without errors (the single calls and 1,024-key
# batches also with four callers, under ASan and TSan), and leave the others
# empty.
#   test_c_floor.sh MCBENCH_C PLAN
set -eu
bin=$1
plan=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
names() { sed -n 's/^{"name":"\([^"]*\)".*/\1/p' "$plan"; } # in plan order
{ names; echo quit; } |
  "$bin" -serve -own-segment -plan "$plan" -master c-floor-test -metadata P2PHANDSHAKE >"$out"
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
head -n 1 "$out" | grep -q '"schema":"mcbench/1","client":"c"' || fail "no run header"
n=0
for name in $(names); do
  n=$((n + 1))
  line=$(sed -n "$((n + 1))p" "$out")
  case $name in
  */x1 | */x1/c* | multi_* | write_perf/zcopy/* | read_perf/zcopy/*)
    echo "$line" | grep -q "\"name\":\"$name\"" || fail "$name: no result"
    echo "$line" | grep -q '"errors":0,' || fail "$name: errors"
    echo "$line" | grep -q '"keys":0,' && fail "$name: no keys moved"
    echo "$line" | grep -q '"cpu_us_per_op":0}' && fail "$name: no CPU time"
    case $name in */c4)
      echo "$line" | grep -q '"callers":4' || fail "$name: not four callers"
      # throughput is over the common window, about the case's duration
      # (a 1,024-key batch under a sanitizer may end it a little later)
      case $name in
      */x1/c4) echo "$line" | grep -Eq '"busy_s":0\.(09|1[0-9])' || fail "$name: window is not the duration" ;;
      *) echo "$line" | grep -Eq '"busy_s":0\.(09|[1-9][0-9]*)' || fail "$name: window is not the duration" ;;
      esac
      ;;
    esac
    ;;
  *) [ "$line" = '{"results":[]}' ] || fail "$name: the floor does not run it, yet answered $line" ;;
  esac
done
[ "$(wc -l <"$out")" -eq $((n + 1)) ] || fail "want $((n + 1)) lines"
echo "ok: $n cases"
