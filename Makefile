# mooncake-go — the entry points everyone uses.
#
#   make demo    the main job on the embedded engine (nothing to install):
#                the store demo, then prefill -> decode over the transfer engine
#   make test    every test: Go (plain, -race, cgocheck2, CGO_ENABLED=0),
#                fuzz seeds, and the C++ engine under ASan/UBSan and TSan
#   make deps    what make test needs beyond Go, gcc/g++ and make: cmake;
#                installs Debian's cmake with apt-get when none is on PATH
#                (make test runs it first, and it says what it does)
#   make bench   testing.B benchmarks of the binding and hostcache
#   make lint    gofmt, go vet and staticcheck (with and without cgo, and the
#                native build's files)
#   make vuln    govulncheck against the Go vulnerability database of the
#                module proxy's golang.org/x/vulndb (fails on a called
#                vulnerability of a required module)
#   make fuzz    run every fuzz target for FUZZTIME each
#
# Against real Mooncake (an upstream build you made; see README):
#   make native      MOONCAKE_PREFIX=/path/to/Mooncake   build build/native/libmcgo_native.so
#   make test-native MOONCAKE_PREFIX=... [MOONCAKE_PYTHONPATH=<dir with mooncake/>]
#                    conformance + hostcache end-to-end + Python interop
#                    on a loopback cluster; fault tests; a short soak; HA tests
#                    when upstream was built with etcd (make chaos-ha: docs/ha.md)
#   make container-check MOONCAKE_PREFIX=...  the container recipe (docs/container.md)
#   make demo-native MOONCAKE_PREFIX=...   the demos on a loopback cluster
#                    (prefill -> decode between two processes over TCP)

GO        ?= go
BUILD     ?= build
FUZZTIME  ?= 20s
# go test links without DWARF (-s -w) unless told otherwise; keep it so that
# cgosymbolizer can name C++ frames if the engine ever crashes in a test.
GOTEST    ?= $(GO) test -ldflags='-s=false -w=false'
PKGS      := ./...
# cgo rebuilds a package when a file in its own directory changes, but not
# when a shared header of cgo/include, cgo/common or cgo/embedded/base does;
# their digest in CGO_CPPFLAGS makes every cgo package rebuild then.
MCGO_HEADERS := $(shell cat cgo/include/mcgo/*.h cgo/common/*.h cgo/embedded/base/*.h | cksum | cut -d' ' -f1)
export CGO_CPPFLAGS += -DMCGO_HEADERS_DIGEST=$(MCGO_HEADERS)

.PHONY: native test-native chaos-native chaos-ha soak-native soak-ha demo-native require-mooncake container-check
.PHONY: all demo test deps check lint go-test go-test-race go-test-cgocheck2 go-test-nocgo \
        cpp-test cpp-test-asan cpp-test-tsan bench fuzz clean vuln

all: test

demo:
	$(GO) run ./cmd/mooncake-demo $(DEMO_ARGS)
	$(GO) run ./cmd/mooncake-pd

test: deps lint go-test go-test-nocgo go-test-race go-test-cgocheck2 cpp-test
	@echo "make test: all passed"

deps:
	@echo "make deps: cmake >= 3.18 for the C++ tests (scripts/ensure-cmake.sh installs Debian's cmake with apt-get if none is on PATH)"
	@cmake=$$(scripts/ensure-cmake.sh) && echo "make deps: using $$cmake ($$($$cmake --version | head -n 1))"

check: test

# staticcheck and govulncheck come through the module proxy, pinned here.
STATICCHECK   ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOVULNCHECK   ?= $(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0
VULNDB_MODULE ?= golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	CGO_ENABLED=0 $(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)
	CGO_ENABLED=0 $(STATICCHECK) $(PKGS)
	$(STATICCHECK) -tags mooncake_native $(PKGS)

# vuln.go.dev is not reachable from every machine this runs on; the module
# proxy serves the database's source (golang.org/x/vulndb, OSV files), which
# its own indexdb turns into a database govulncheck reads from a directory.
# Standard-library findings are fixed by a newer Go, not by this module:
# scripts/vulngate lists them and fails only on required modules.
vuln:
	@echo "make vuln: govulncheck with the vulnerability database of $(VULNDB_MODULE) (module proxy)"
	@dir=$$($(GO) mod download -json $(VULNDB_MODULE) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p') && \
	  test -d "$$dir/data/osv" && \
	  rm -rf $(BUILD)/vulndb && \
	  $(GO) run $(subst @,/cmd/indexdb@,$(VULNDB_MODULE)) -vulns "$$dir/data/osv" -out $(abspath $(BUILD))/vulndb
	$(GOVULNCHECK) -db file://$(abspath $(BUILD))/vulndb -format json $(PKGS) > $(BUILD)/vulncheck.json
	$(GO) run ./scripts/vulngate < $(BUILD)/vulncheck.json

go-test:
	$(GOTEST) -count=1 $(PKGS)

# hostcache is pure Go; mooncake must build and fail cleanly without cgo.
go-test-nocgo:
	CGO_ENABLED=0 $(GOTEST) -count=1 $(PKGS)

go-test-race:
	$(GOTEST) -count=1 -race $(PKGS)

# Full cgo pointer checking (GOEXPERIMENT=cgocheck2) over every package that
# crosses into C.
go-test-cgocheck2:
	GOEXPERIMENT=cgocheck2 $(GOTEST) -count=1 $(PKGS)

cpp-test: cpp-test-asan cpp-test-tsan

cpp-test-asan:
	@cmake=$$(scripts/ensure-cmake.sh) && \
	  $$cmake -S . -B $(BUILD)/cpp-asan -DMCGO_SANITIZE=ON >/dev/null && \
	  $$cmake --build $(BUILD)/cpp-asan -j2 && \
	  ctest=$$(dirname $$cmake)/ctest && \
	  $$ctest --test-dir $(BUILD)/cpp-asan --output-on-failure

cpp-test-tsan:
	@cmake=$$(scripts/ensure-cmake.sh) && \
	  $$cmake -S . -B $(BUILD)/cpp-tsan -DMCGO_TSAN=ON >/dev/null && \
	  $$cmake --build $(BUILD)/cpp-tsan -j2 && \
	  ctest=$$(dirname $$cmake)/ctest && \
	  $$ctest --test-dir $(BUILD)/cpp-tsan --output-on-failure

bench:
	$(GOTEST) -run '^$$' -bench . -benchmem ./mooncake/ ./hostcache/...

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; \
	    $(GOTEST) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

clean:
	rm -rf $(BUILD)
	$(GO) clean -testcache

# ---- native backend (real Mooncake) -------------------------------------------

NATIVE_DIR := $(abspath $(BUILD))/native
# The tests and demos run the programs of the default build (no build tag)
# with the native library loaded at run time (MCGO_NATIVE_LIBRARY); the
# benchmark clients still link it (-tags mooncake_native, NATIVE_ENV).
NATIVE_RUN := MCGO_NATIVE_LIBRARY="$(NATIVE_DIR)/libmcgo_native.so" MOONCAKE_PREFIX="$(MOONCAKE_PREFIX)"
NATIVE_ENV := CGO_LDFLAGS="-L$(NATIVE_DIR) -Wl,-rpath,$(NATIVE_DIR)" MOONCAKE_PREFIX="$(MOONCAKE_PREFIX)"
# The examples run on the embedded engine only (their masters are names);
# the HA group test of cmd/mooncake-prefix runs in chaos-ha (a process of
# its own, as every etcd HA group test).
NATIVE_SKIP := -skip '^(Example|TestHAIndexFollowsLeader$$)'

# Where upstream's Python package (mooncake.store) is importable from: the
# interop test then runs, and must pass. Without it, the interop test skips
# and says why.
ifneq ($(MOONCAKE_PYTHONPATH),)
NATIVE_ENV += MCGO_PYTHONPATH="$(MOONCAKE_PYTHONPATH)" MCGO_REQUIRE_PYTHON=1
NATIVE_RUN += MCGO_PYTHONPATH="$(MOONCAKE_PYTHONPATH)" MCGO_REQUIRE_PYTHON=1
endif
CLUSTER    := $(GO) run ./scripts/cluster

require-mooncake:
	@if [ -z "$(MOONCAKE_PREFIX)" ] && [ -z "$(MOONCAKE_SOURCE_DIR)" ]; then \
	  echo "Mooncake not found: set MOONCAKE_PREFIX to an upstream Mooncake source tree with its build in <tree>/build"; \
	  echo "(or MOONCAKE_SOURCE_DIR and MOONCAKE_BUILD_DIR). Build upstream by following its own docs:"; \
	  echo "https://github.com/kvcache-ai/Mooncake/blob/main/docs/source/getting_started/build.md"; \
	  exit 1; fi

native: require-mooncake
	@mkdir -p $(BUILD) && cmake=$$(scripts/ensure-cmake.sh) && \
	  $$cmake -S cgo/native -B $(NATIVE_DIR) \
	    $(if $(MOONCAKE_PREFIX),-DMOONCAKE_PREFIX=$(MOONCAKE_PREFIX)) \
	    $(if $(MOONCAKE_SOURCE_DIR),-DMOONCAKE_SOURCE_DIR=$(MOONCAKE_SOURCE_DIR) -DMOONCAKE_BUILD_DIR=$(MOONCAKE_BUILD_DIR)) \
	    >$(NATIVE_DIR).configure.log 2>&1 || { cat $(NATIVE_DIR).configure.log; exit 1; } && \
	  grep -E "^-- Mooncake" $(NATIVE_DIR).configure.log; \
	  $$cmake --build $(NATIVE_DIR) -j2 && \
	  ls -l $(NATIVE_DIR)/libmcgo_native.so | sed "s|$(CURDIR)/||"

# One fresh master for the whole run (MCGO_TEST_ISOLATED=1), packages one at
# a time (-p 1) so that the capacity tests own the cluster.
# The master publishes KV events when upstream was built with
# ENABLE_KV_EVENTS (scripts/cluster -kv-events exports its endpoint); the
# KV event tests must then run (MCGO_REQUIRE_KV_EVENTS), else they skip.
# (env, because an assignment that comes out of a command substitution is
# not one to the shell.)
test-native: native
	env $(NATIVE_RUN) MCGO_TEST_ISOLATED=1 MCGO_REQUIRE_UPSTREAM=1 \
	  $$(grep -q "ENABLE_KV_EVENTS=ON" $(NATIVE_DIR).configure.log && echo MCGO_REQUIRE_KV_EVENTS=1) \
	  $(CLUSTER) -kv-events -- \
	  $(GO) test -count=1 -p 1 $(NATIVE_SKIP) $(NATIVE_TEST_FLAGS) ./internal/codes/... ./internal/cabi/... ./mooncake/... ./hostcache/... ./interop/ ./cmd/mooncake-pd/... ./cmd/mooncake-prefix/...
	$(NATIVE_RUN) MCGO_REQUIRE_UPSTREAM=1 $(CLUSTER) -- $(GO) test -count=1 -run '^TestTE' $(NATIVE_TEST_FLAGS) ./cmd/mcbench/
	$(MAKE) --no-print-directory chaos-native
	@if grep -q "STORE_USE_ETCD=ON" $(NATIVE_DIR).configure.log; then \
	  $(MAKE) --no-print-directory chaos-ha; \
	else echo "test-native: no HA tests (this upstream was built without STORE_USE_ETCD: docs/ha.md)"; fi
	@if [ -n "$(MOONCAKE_PYTHONPATH)" ]; then \
	  $(MAKE) --no-print-directory soak-native SOAK_DURATION=75s SOAK_RESTART=20s SOAK_REPORT=; \
	else echo "test-native: no short soak (it needs upstream's Python client: MOONCAKE_PYTHONPATH)"; fi
	@set -e; for b in ETCD REDIS; do \
	  if ! grep -q "STORE_USE_$$b=ON" $(NATIVE_DIR).configure.log; then echo "test-native: no HA soak on $$b (upstream built without STORE_USE_$$b)"; \
	  elif [ -z "$(MOONCAKE_PYTHONPATH)" ]; then echo "test-native: no HA soak on $$b (it needs upstream's Python client: MOONCAKE_PYTHONPATH)"; \
	  else $(MAKE) --no-print-directory soak-ha SOAK_HA=$$(echo $$b | tr A-Z a-z) SOAK_DURATION=$(HA_SOAK_DURATION) SOAK_REPORT=; fi; done

# Fault tests: each starts its own master (internal/testcluster) and kills,
# restarts or cuts off part of the cluster by PID (docs/faults.md).
chaos-native: native
	$(NATIVE_RUN) MCGO_REQUIRE_UPSTREAM=1 $(GO) test -count=1 -skip '$(HA_TESTS)' $(NATIVE_TEST_FLAGS) ./interop/faults/

# The HA fault tests (docs/ha.md): an HA master group on etcd and on Redis,
# and transfer engines on etcd metadata, each with its own server (etcd and
# redis-server on PATH, or MCGO_ETCD_BIN, MCGO_REDIS_BIN) on loopback. They
# need an upstream built with STORE_USE_ETCD, STORE_USE_REDIS and USE_ETCD;
# test-native runs them when it was.
# Each test of an etcd HA group runs in a process of its own: upstream keeps
# one etcd client per process for the leader election, for good, so a
# second group on another etcd is refused (docs/ha.md, "One per process").
# The last line is the prefix index following an HA group's leader through
# its KV event publishers (docs/prefix.md, "HA").
HA_TESTS       := ^(TestHA|TestEngine(Etcd|Redis)|TestTwoGoRuntimes)
HA_GROUP_TESTS := TestHALeaderKilled TestHABackendRestarted TestHAPutAfterRemove TestHAPlacementAfterFailover TestHAKVEventsFollowLeader
chaos-ha: native
	@set -e; for t in $(HA_GROUP_TESTS); do \
	  $(NATIVE_RUN) MCGO_REQUIRE_UPSTREAM=1 MCGO_REQUIRE_HA=1 $(GO) test -count=1 -run "^$$t\$$" $(NATIVE_TEST_FLAGS) ./interop/faults/; done
	$(NATIVE_RUN) MCGO_REQUIRE_UPSTREAM=1 MCGO_REQUIRE_HA=1 $(GO) test -count=1 -run '^(TestEngine(Etcd|Redis)|TestTwoGoRuntimes)' $(NATIVE_TEST_FLAGS) ./interop/faults/
	env $(NATIVE_RUN) MCGO_REQUIRE_UPSTREAM=1 MCGO_REQUIRE_HA=1 \
	  $$(grep -q "ENABLE_KV_EVENTS=ON" $(NATIVE_DIR).configure.log && echo MCGO_REQUIRE_KV_EVENTS=1) \
	  $(GO) test -count=1 -run '^TestHAIndexFollowsLeader$$' $(NATIVE_TEST_FLAGS) ./cmd/mooncake-prefix/

# The soak: a Go client, a Go client process and upstream's Python client on
# one loopback master for SOAK_DURATION, one client process restarted every
# SOAK_RESTART, every byte read checked (interop/soak, docs/soak.md). The
# report goes to SOAK_REPORT (default build/soak/<time>/report.md).
SOAK_DURATION ?= 10m
SOAK_RESTART  ?= 1m
SOAK_TIMEOUT  ?= 3h
SOAK_REPORT   ?=
SOAK_RUN = $(NATIVE_RUN) MCGO_REQUIRE_UPSTREAM=1 MCGO_SOAK_DURATION=$(SOAK_DURATION) MCGO_SOAK_RESTART=$(SOAK_RESTART) MCGO_SOAK_REPORT="$(SOAK_REPORT)" PYTHON="$(PYTHON)"
SOAK_ARGS = MOONCAKE_PREFIX=$(MOONCAKE_PREFIX) MOONCAKE_PYTHONPATH=$(MOONCAKE_PYTHONPATH) SOAK_DURATION=$(SOAK_DURATION) SOAK_RESTART=$(SOAK_RESTART)
SOAK_TEST = $(GO) test -count=1 -run '^TestSoak$$' -timeout $(SOAK_TIMEOUT) -v ./interop/soak/
NEED_PYTHON = @test -n "$(MOONCAKE_PYTHONPATH)" || { echo "make $@ needs upstream's Python client: MOONCAKE_PYTHONPATH=<dir with mooncake/>"; exit 1; }
soak-native: native
	$(NEED_PYTHON)
	$(SOAK_RUN) MCGO_SOAK_COMMAND="make soak-native $(SOAK_ARGS)" $(SOAK_TEST)

# The HA soak (docs/ha.md): the same clients on an HA group of two masters
# electing their leader in etcd, with etcd metadata (SOAK_HA=redis: in
# Redis, with Redis metadata); every SOAK_FAILOVER the leader is SIGKILLed
# and started again as a standby. It needs an upstream built with the
# backend (STORE_USE_ETCD and USE_ETCD, or STORE_USE_REDIS and USE_REDIS),
# and its server (etcd or redis-server on PATH, or MCGO_ETCD_BIN /
# MCGO_REDIS_BIN).
SOAK_FAILOVER ?= 1m
SOAK_HA       ?= etcd
# test-native's HA soaks, one on each backend the build has (3 failovers each).
HA_SOAK_DURATION ?= 4m
soak-ha: native
	$(NEED_PYTHON)
	$(SOAK_RUN) MCGO_SOAK_HA=$(SOAK_HA) MCGO_SOAK_FAILOVER=$(SOAK_FAILOVER) \
	  MCGO_SOAK_COMMAND="make soak-ha $(SOAK_ARGS) SOAK_HA=$(SOAK_HA) SOAK_FAILOVER=$(SOAK_FAILOVER)" $(SOAK_TEST)

# The container recipe, checked (docs/container.md): the library against
# MOONCAKE_PREFIX, the conformance suites with it loaded, and a service
# built with plain go build running on it.
container-check: require-mooncake
	BUILD=$(BUILD) MOONCAKE_PREFIX=$(MOONCAKE_PREFIX) scripts/container-check.sh

demo-native: native
	$(NATIVE_RUN) $(CLUSTER) -- $(GO) run ./cmd/mooncake-demo $(DEMO_ARGS)
	$(GO) build -o $(BUILD)/mooncake-pd ./cmd/mooncake-pd
	$(NATIVE_RUN) $(CLUSTER) -- $(BUILD)/mooncake-pd -processes 2

# ---- benchmarks against upstream's Python client -------------------------------
#
#   make bench-compare MOONCAKE_PREFIX=/path/to/Mooncake MOONCAKE_PYTHONPATH=<dir with mooncake/>
#                      [BENCH_ROUNDS=2] [BENCH_REPEAT=1] [BENCH_ARGS="-duration 2s -scenarios hicache_set,..."]
#                      [PYTHON=python3]
#       starts a loopback cluster, keeps a Go client (cmd/mcbench, native) and
#       a Python client (scripts/bench_python.py) connected, runs every case
#       on each in turn (A B A B, BENCH_REPEAT times; fresh processes every
#       round, the first to start alternating; both run the plan file that
#       mcbench writes from BENCH_ARGS), and writes docs/benchmarks.{json,svg}
#       and the tables in docs/benchmarks-tables.md. The plan, every run's JSON and
#       the logs stay in build/bench/<time>/. A third client, the C floor
#       (cgo/bench/mcbench_c.cc, built here with $(CXX) against
#       libmcgo_native.so), runs the single-call cases (with one caller and
#       with -callers threads) and the raw multi-buffer cases, after the pair
#       or, in every other sample, before it. The plan's concurrency cases
#       run with -callers (default 4,16,64) goroutines / threads, and each of
#       them (one caller included) again in the Go client with combining on
#       (NAME/combining, run by a Go process of their own, held against
#       Python's and C's runs of NAME;
#       -combining=false in BENCH_ARGS for none). Run bench-aa first: the
#       report's views show its docs/benchmarks-aa.json beside their ratios.
#   make bench-aa MOONCAKE_PREFIX=... [BENCH_ROUNDS=2] [BENCH_REPEAT=1] [BENCH_ARGS=...]
#       the same drive with the Go client on both sides (A/A): the noise floor
#       of a Go/Python ratio on this machine, in docs/benchmarks-aa.md and
#       docs/benchmarks-aa.json (keys/s, CPU per key and p50 ratios).
#   make bench-floor-host MOONCAKE_PREFIX=...
#       the C floor run inside a Go process (cgo/bench/floorhost), without and
#       with an empty Go callback per request, beside Go and the plain floor:
#       16-caller single 4 KiB calls, runs in build/bench/floorhost-runs{,-tick}/
#   make bench-python  MOONCAKE_PREFIX=... [MOONCAKE_PYTHONPATH=...] [BENCH_ARGS=...]
#       the Python side alone, on a loopback cluster: BENCH_ARGS are mcbench's
#       plan flags (go run ./cmd/mcbench -h), the plan goes to build/bench/plan.jsonl.
#   go run ./cmd/mcbench [-quick]   the Go side alone, on the embedded engine.

.PHONY: bench-clients bench-compare bench-aa bench-python bench-floor-host

PYTHON       ?= python3
BENCH_ROUNDS ?= 2
BENCH_REPEAT ?= 1
BENCH_ARGS   ?=
BENCH_BIN    := $(abspath $(BUILD))/bench/mcbench-native
# The C floor: our C ABI called in plain loops (cgo/bench/mcbench_c.cc).
BENCH_C      := $(abspath $(BUILD))/bench/mcbench-c
CXX          ?= g++
BENCH_PLAN   := $(abspath $(BUILD))/bench/plan.jsonl
BENCH_PYENV  := $(if $(MOONCAKE_PYTHONPATH),PYTHONPATH="$(MOONCAKE_PYTHONPATH)")

# The benchmarks' clients: the native mcbench and the C floor.
bench-clients: native
	$(NATIVE_ENV) $(GO) build -tags mooncake_native -o $(BENCH_BIN) ./cmd/mcbench
	$(CXX) -O2 -std=c++17 -pthread -Wall -Wextra -Icgo/include cgo/bench/mcbench_c.cc -L$(NATIVE_DIR) -lmcgo_native \
	  -Wl,-rpath,$(NATIVE_DIR) -o $(BENCH_C)

# bench-aa is bench-compare with the Go binary as the second client.
bench-compare bench-aa: bench-clients
	$(NATIVE_ENV) $(BENCH_PYENV) MCBENCH=$(BENCH_BIN) MCBENCH_C=$(BENCH_C) PYTHON="$(PYTHON)" BENCH_ROUNDS=$(BENCH_ROUNDS) BENCH_REPEAT=$(BENCH_REPEAT) \
	  BENCH_ARGS="$(BENCH_ARGS)" BENCH_AA=$(if $(filter bench-aa,$@),1,0) \
	  BENCH_COMMAND="make $@ MOONCAKE_PREFIX=$(MOONCAKE_PREFIX)$(if $(filter bench-compare,$@), MOONCAKE_PYTHONPATH=$(MOONCAKE_PYTHONPATH)) BENCH_ROUNDS=$(BENCH_ROUNDS) BENCH_REPEAT=$(BENCH_REPEAT)$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
	  $(CLUSTER) -- scripts/bench_compare.sh

# The C floor inside a Go process (cgo/bench/floorhost) as the third client,
# without and then with an empty Go callback before each request (-tick),
# beside Go and the plain C floor (the drive's second client), on the single
# 4 KiB calls with 16 callers: what the runtime's crossings cost.
FLOOR_HOST := $(abspath $(BUILD))/bench/floorhost
bench-floor-host: bench-clients
	$(NATIVE_ENV) $(GO) build -tags mooncake_native -o $(FLOOR_HOST) ./cgo/bench/floorhost
	$(NATIVE_ENV) $(CLUSTER) -- sh -c 'for tick in "" -tick; do \
	  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 $(BENCH_BIN) drive -rounds 2 -repeat 2 -out $(abspath $(BUILD))/bench/floorhost-runs$$tick \
	    -python $(BENCH_C) -c "$(FLOOR_HOST) $$tick" -- -master "$$MCGO_TEST_MASTER" -metadata "$$MCGO_TEST_METADATA" \
	    -hostname 127.0.0.1 -protocol tcp -scenarios write_perf,read_perf -sizes 4KiB -batches 1 -callers 16 -combining=false -duration 2s || exit 1; done'

# -list opens no store, so the plan needs neither cgo nor a cluster.
bench-python: require-mooncake
	@mkdir -p $(dir $(BENCH_PLAN))
	CGO_ENABLED=0 $(GO) run ./cmd/mcbench -list $(BENCH_ARGS) >$(BENCH_PLAN)
	$(NATIVE_ENV) $(BENCH_PYENV) $(CLUSTER) -- $(PYTHON) scripts/bench_python.py --plan $(BENCH_PLAN)

# ---- transfer engine against upstream's transfer_engine_bench ------------------
#
#   make bench-te-compare MOONCAKE_PREFIX=... [TE_ARGS="-blocks 65536 -rounds 3 -duration 5"]
#       on a loopback cluster (HTTP metadata), `mcbench te` (native) and
#       upstream's transfer_engine_bench (from the build tree) run the same
#       cases in paired, alternating rounds, each initiator against its own
#       target; writes docs/benchmarks-te.{md,svg}, the runs in build/bench-te/.
#       Each case's A/A range comes from TE_NOISE (default: the latest
#       build/bench-te/*-aa/runs.json, so run bench-te-aa first).
#   make bench-te-aa MOONCAKE_PREFIX=... [TE_ARGS=...]
#       the binding against itself: the noise floor, docs/benchmarks-te-aa.md.

.PHONY: bench-te-compare bench-te-aa
TE_ARGS  ?=
TE_NOISE ?= $(lastword $(sort $(wildcard $(BUILD)/bench-te/*-aa/runs.json)))
TE_BENCH := $(MOONCAKE_PREFIX)/build/mooncake-transfer-engine/example/transfer_engine_bench

bench-te-compare bench-te-aa: native
	$(NATIVE_ENV) $(GO) build -tags mooncake_native -o $(BENCH_BIN) ./cmd/mcbench
	@test "$@" = bench-te-aa || test -x "$(TE_BENCH)" || { echo "no $(TE_BENCH) (upstream built without its examples?)"; exit 1; }
	$(NATIVE_ENV) $(CLUSTER) -- $(BENCH_BIN) te-compare -self $(BENCH_BIN) \
	  $(if $(filter bench-te-aa,$@),-aa,-upstream $(TE_BENCH) $(if $(TE_NOISE),-noise $(TE_NOISE))) \
	  -command "make $@ MOONCAKE_PREFIX=$(MOONCAKE_PREFIX)$(if $(TE_ARGS), TE_ARGS='$(TE_ARGS)')" $(TE_ARGS)
