#!/usr/bin/env bash
# Go binding vs upstream's Python client, side by side, on one cluster.
#
# Run by `make bench-compare` inside `go run ./scripts/cluster -- ...`, which
# started mooncake_master (with its HTTP metadata server) on loopback and
# exported MCGO_TEST_MASTER, MCGO_TEST_METADATA and MC_TCP_BIND_ADDRESS.
#
# The plan is run in chunks (one scenario and API at a time). For every
# chunk, each round runs the Go command (cmd/mcbench, native build) and then
# scripts/bench_python.py with the same flags: Go, Python, Go, Python, ...
# So both clients measure a case within seconds of each other, which keeps a
# change in the machine's load from landing on one client only. Each client
# process mounts its own segment (the same size), prefaults it, runs the
# chunk and unmounts it; only one client is connected at a time.
#
# It keeps every run's JSON, merges each client's chunks per round, and writes
# docs/benchmarks.json, docs/benchmarks.png and the table section of
# docs/benchmarks.md (medians over the rounds), plus the merged runs in
# docs/benchmarks-runs/.
#
# Environment (the Makefile sets these):
#   MCBENCH          the native mcbench binary (required)
#   PYTHON           interpreter that can `import mooncake.store` (python3)
#   BENCH_ROUNDS     rounds per client (3)
#   BENCH_ARGS       extra flags for both clients (e.g. "-duration 2s"; not -scenarios/-apis)
#   BENCH_SCENARIOS  scenarios to run (default: all)
#   BENCH_APIS       store_kv_bench APIs (plain,zcopy)
#   BENCH_OUT        directory for the runs' JSON and logs (build/bench/<time>)
#   BENCH_DOCS       where the report goes (docs)
#   BENCH_COMMAND    the command line quoted in the report
set -euo pipefail

: "${MCBENCH:?set MCBENCH to the native mcbench binary}"
: "${MCGO_TEST_MASTER:?run me under scripts/cluster (make bench-compare)}"
: "${MCGO_TEST_METADATA:?run me under scripts/cluster (make bench-compare)}"
PYTHON=${PYTHON:-python3}
ROUNDS=${BENCH_ROUNDS:-3}
OUT=${BENCH_OUT:-build/bench/$(date -u +%Y%m%dT%H%M%SZ)}
DOCS=${BENCH_DOCS:-docs}
COMMAND=${BENCH_COMMAND:-make bench-compare}
SCENARIOS=${BENCH_SCENARIOS:-verify_write,fill,write_perf,read_perf,mixed_rw,hicache_set,hicache_get,hicache_exists,multi_put,multi_get,memcpy}
APIS=${BENCH_APIS:-plain,zcopy}
read -r -a EXTRA <<<"${BENCH_ARGS:-}"

mkdir -p "$OUT/parts" "$DOCS"
if ! "$PYTHON" -c "import mooncake.store" 2>"$OUT/python-import.log"; then
  echo "bench-compare: $PYTHON cannot import mooncake.store (see $OUT/python-import.log)." >&2
  echo "Set PYTHON and/or MOONCAKE_PYTHONPATH to upstream's built Python package." >&2
  exit 1
fi

# Chunks: each store_kv_bench scenario with each API, each HiCache scenario,
# and the multi-buffer calls with their memcpy reference.
CHUNKS=()
IFS=, read -r -a SCS <<<"$SCENARIOS"
IFS=, read -r -a APS <<<"$APIS"
multi=()
for sc in "${SCS[@]}"; do
  case $sc in
    verify_write | fill | write_perf | read_perf | mixed_rw)
      for api in "${APS[@]}"; do CHUNKS+=("-scenarios $sc -apis $api"); done ;;
    hicache_set | hicache_get | hicache_exists) CHUNKS+=("-scenarios $sc") ;;
    multi_put | multi_get | memcpy) multi+=("$sc") ;;
    *) echo "bench-compare: unknown scenario $sc" >&2; exit 2 ;;
  esac
done
if ((${#multi[@]})); then CHUNKS+=("-scenarios $(IFS=,; echo "${multi[*]}")"); fi

COMMON=(-master "$MCGO_TEST_MASTER" -metadata "$MCGO_TEST_METADATA" -hostname 127.0.0.1 -protocol tcp "${EXTRA[@]}")
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "bench-compare: cluster $MCGO_TEST_MASTER ($MCGO_TEST_METADATA)"
echo "bench-compare: ${#CHUNKS[@]} chunks x $ROUNDS rounds x 2 clients; output $OUT"
echo "bench-compare: load before the run: $(load)"
# shellcheck disable=SC2086
"$MCBENCH" -list -scenarios "$SCENARIOS" -apis "$APIS" "${EXTRA[@]}" >"$OUT/plan.jsonl"
echo "bench-compare: $(wc -l <"$OUT/plan.jsonl") cases per client per round"

run_client() { # client chunk-index round chunk-args...
  local client=$1 c=$2 r=$3
  shift 3
  local base="$OUT/parts/$client-r$r-c$(printf %02d "$c")"
  local cmd
  if [ "$client" = go ]; then cmd=("$MCBENCH"); else cmd=("$PYTHON" scripts/bench_python.py); fi
  if ! "${cmd[@]}" "${COMMON[@]}" "$@" -json "$base.json" >"$base.txt" 2>"$base.log"; then
    echo "bench-compare: the $client run failed ($*); see $base.log" >&2
    tail -5 "$base.log" >&2
    exit 1
  fi
}

start=$(date +%s)
for c in "${!CHUNKS[@]}"; do
  # shellcheck disable=SC2206
  args=(${CHUNKS[$c]})
  for r in $(seq 1 "$ROUNDS"); do
    printf 'bench-compare: [%2d/%d] %-40s round %d/%d  (%4ds, load %s)\n' "$((c + 1))" "${#CHUNKS[@]}" \
      "${CHUNKS[$c]}" "$r" "$ROUNDS" "$(($(date +%s) - start))" "$(cut -d' ' -f1 /proc/loadavg)"
    run_client go "$c" "$r" "${args[@]}"
    run_client py "$c" "$r" "${args[@]}"
  done
done
echo "bench-compare: load after the run: $(load); $(($(date +%s) - start))s"

for r in $(seq 1 "$ROUNDS"); do
  "$MCBENCH" merge -o "$OUT/go-$r.json" "$OUT"/parts/go-r"$r"-c*.json >/dev/null
  "$MCBENCH" merge -o "$OUT/py-$r.json" "$OUT"/parts/py-r"$r"-c*.json >/dev/null
done

"$MCBENCH" compare -go "$OUT/go-*.json" -python "$OUT/py-*.json" -command "$COMMAND" \
  -out "$DOCS/benchmarks.json" -png "$DOCS/benchmarks.png" -md "$DOCS/benchmarks.md" | tee "$OUT/compare.md"
mkdir -p "$DOCS/benchmarks-runs"
rm -f "$DOCS"/benchmarks-runs/*.json
cp "$OUT"/go-*.json "$OUT"/py-*.json "$DOCS/benchmarks-runs/"
echo "bench-compare: wrote $DOCS/benchmarks.json, $DOCS/benchmarks.png, the table in $DOCS/benchmarks.md; runs in $DOCS/benchmarks-runs"
