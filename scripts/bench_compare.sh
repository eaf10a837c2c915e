#!/usr/bin/env bash
# Go binding vs upstream's Python client, side by side, on one cluster.
#
# Run by `make bench-compare` inside `go run ./scripts/cluster -- ...`, which
# started mooncake_master (with its HTTP metadata server) on loopback and
# exported MCGO_TEST_MASTER, MCGO_TEST_METADATA and MC_TCP_BIND_ADDRESS.
# For each round it runs the Go command (cmd/mcbench, native build) and then
# scripts/bench_python.py with the same flags (A B A B ...), keeps every run's
# JSON, and writes the comparison: docs/benchmarks.json, docs/benchmarks.png
# and the table section of docs/benchmarks.md (medians over the rounds).
#
# Environment (the Makefile sets these):
#   MCBENCH         the native mcbench binary (required)
#   PYTHON          interpreter that can `import mooncake.store` (python3)
#   BENCH_ROUNDS    rounds per client (3)
#   BENCH_ARGS      extra flags for both clients (e.g. "-duration 2s")
#   BENCH_OUT       directory for the runs' JSON and logs (build/bench/<time>)
#   BENCH_DOCS      where the report goes (docs)
#   BENCH_COMMAND   the command line quoted in the report
set -euo pipefail

: "${MCBENCH:?set MCBENCH to the native mcbench binary}"
: "${MCGO_TEST_MASTER:?run me under scripts/cluster (make bench-compare)}"
: "${MCGO_TEST_METADATA:?run me under scripts/cluster (make bench-compare)}"
PYTHON=${PYTHON:-python3}
ROUNDS=${BENCH_ROUNDS:-3}
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

COMMON=(-master "$MCGO_TEST_MASTER" -metadata "$MCGO_TEST_METADATA" -hostname 127.0.0.1 -protocol tcp "${EXTRA[@]}")
echo "bench-compare: cluster $MCGO_TEST_MASTER ($MCGO_TEST_METADATA), $ROUNDS rounds, output $OUT"
echo "bench-compare: load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
"$MCBENCH" -list "${EXTRA[@]}" >"$OUT/plan.jsonl"
echo "bench-compare: $(wc -l <"$OUT/plan.jsonl") cases per client per round"

for r in $(seq 1 "$ROUNDS"); do
  echo "bench-compare: round $r/$ROUNDS: Go ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
  "$MCBENCH" "${COMMON[@]}" -json "$OUT/go-$r.json" >"$OUT/go-$r.txt" 2>"$OUT/go-$r.log" ||
    { echo "bench-compare: the Go run failed; see $OUT/go-$r.log" >&2; tail -5 "$OUT/go-$r.log" >&2; exit 1; }
  echo "bench-compare: round $r/$ROUNDS: Python ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
  "$PYTHON" scripts/bench_python.py "${COMMON[@]}" -json "$OUT/py-$r.json" >"$OUT/py-$r.txt" 2>"$OUT/py-$r.log" ||
    { echo "bench-compare: the Python run failed; see $OUT/py-$r.log" >&2; tail -5 "$OUT/py-$r.log" >&2; exit 1; }
done
echo "bench-compare: load after the run: $(cut -d' ' -f1-3 /proc/loadavg)"

"$MCBENCH" compare -go "$OUT/go-*.json" -python "$OUT/py-*.json" -command "$COMMAND" \
  -out "$DOCS/benchmarks.json" -png "$DOCS/benchmarks.png" -md "$DOCS/benchmarks.md" | tee "$OUT/compare.md"
mkdir -p "$DOCS/benchmarks-runs"
rm -f "$DOCS"/benchmarks-runs/*.json
cp "$OUT"/go-*.json "$OUT"/py-*.json "$DOCS/benchmarks-runs/"
echo "bench-compare: wrote $DOCS/benchmarks.json, $DOCS/benchmarks.png, the table in $DOCS/benchmarks.md; runs in $DOCS/benchmarks-runs"
