#!/usr/bin/env bash
# Go binding vs upstream's Python client, side by side, on one cluster.
#
# Run by `make bench-compare` inside `go run ./scripts/cluster -- ...`, which
# started mooncake_master (with its HTTP metadata server) on loopback and
# exported MCGO_TEST_MASTER, MCGO_TEST_METADATA and MC_TCP_BIND_ADDRESS.
#
# `mcbench drive` does the measuring. For each round it starts one Go client
# (cmd/mcbench, native build) and one Python client (scripts/bench_python.py).
# Both take the same flags, stay connected, and each puts its objects in its
# own segment. Then drive sends every case of the plan to Go, then to Python:
# A B A B, case by case, so the two measure a case seconds apart and never
# at the same time. It keeps every run's JSON. `mcbench compare` then writes
# docs/benchmarks.json, docs/benchmarks.png and the table section of
# docs/benchmarks.md (medians over the rounds); the runs are copied to
# docs/benchmarks-runs/.
#
# Environment (the Makefile sets these):
#   MCBENCH         the native mcbench binary (required)
#   PYTHON          interpreter that can `import mooncake.store` (python3)
#   BENCH_ROUNDS    rounds: fresh pairs of client processes, Go started first in
#                   odd rounds and Python in even ones (2)
#   BENCH_REPEAT    runs of each case per client in a round, alternating (2)
#   BENCH_ARGS      extra flags for both clients (e.g. "-duration 2s -scenarios hicache_set")
#   BENCH_OUT       directory for the runs' JSON and logs (build/bench/<time>)
#   BENCH_DOCS      where the report goes (docs)
#   BENCH_COMMAND   the command line quoted in the report
set -euo pipefail

: "${MCBENCH:?set MCBENCH to the native mcbench binary}"
: "${MCGO_TEST_MASTER:?run me under scripts/cluster (make bench-compare)}"
: "${MCGO_TEST_METADATA:?run me under scripts/cluster (make bench-compare)}"
PYTHON=${PYTHON:-python3}
ROUNDS=${BENCH_ROUNDS:-2}
REPEAT=${BENCH_REPEAT:-2}
OUT=${BENCH_OUT:-build/bench/$(date -u +%Y%m%dT%H%M%SZ)}
DOCS=${BENCH_DOCS:-docs}
COMMAND=${BENCH_COMMAND:-make bench-compare}
read -r -a EXTRA <<<"${BENCH_ARGS:-}"

mkdir -p "$OUT" "$DOCS"
if ! "$PYTHON" -c "import mooncake.store" 2>"$OUT/python-import.log"; then
  echo "bench-compare: $PYTHON cannot import mooncake.store (see $OUT/python-import.log)." >&2
  echo "Set PYTHON and/or MOONCAKE_PYTHONPATH to upstream's built Python package." >&2
  exit 1
fi
load() { cut -d' ' -f1-3 /proc/loadavg; }
# Upstream allocates its segment with aligned_alloc, untouched until the first
# put. With this tunable glibc advises such large chunks MADV_HUGEPAGE, so
# both clients' segments get transparent huge pages, like the registered
# memory (-thp). On this kind of virtual machine that doubles copy bandwidth.
export GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1}
echo "bench-compare: cluster $MCGO_TEST_MASTER ($MCGO_TEST_METADATA); $ROUNDS rounds x $REPEAT; output $OUT"
echo "bench-compare: load before the run: $(load)"
"$MCBENCH" drive -rounds "$ROUNDS" -repeat "$REPEAT" -out "$OUT" -python "$PYTHON scripts/bench_python.py" -- \
  -master "$MCGO_TEST_MASTER" -metadata "$MCGO_TEST_METADATA" -hostname 127.0.0.1 -protocol tcp "${EXTRA[@]}" \
  2> >(tee "$OUT/drive.log" >&2)
echo "bench-compare: load after the run: $(load)"

if [ ! -f "$DOCS/benchmarks.md" ]; then
  printf '# Benchmarks\n\n<!-- mcbench:begin -->\n<!-- mcbench:end -->\n' >"$DOCS/benchmarks.md"
fi
"$MCBENCH" compare -go "$OUT/go-*.json" -python "$OUT/py-*.json" -command "$COMMAND" \
  -out "$DOCS/benchmarks.json" -png "$DOCS/benchmarks.png" -md "$DOCS/benchmarks.md" | tee "$OUT/compare.md"
mkdir -p "$DOCS/benchmarks-runs"
rm -f "$DOCS"/benchmarks-runs/*.json
cp "$OUT"/go-*.json "$OUT"/py-*.json "$DOCS/benchmarks-runs/"
echo "bench-compare: wrote $DOCS/benchmarks.json, $DOCS/benchmarks.png, the table in $DOCS/benchmarks.md; runs in $DOCS/benchmarks-runs"
