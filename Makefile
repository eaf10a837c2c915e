# mooncake-go — the entry points everyone uses.
#
#   make demo    the main job on the embedded engine (nothing to install)
#   make test    every test: Go (plain, -race, cgocheck2, CGO_ENABLED=0),
#                fuzz seeds, and the C++ engine under ASan/UBSan and TSan
#   make bench   testing.B benchmarks of the binding and hostcache
#   make lint    gofmt + go vet
#   make fuzz    run every fuzz target for FUZZTIME each

GO        ?= go
BUILD     ?= build
FUZZTIME  ?= 20s
GOTEST    ?= $(GO) test
PKGS      := ./...

.PHONY: all demo test check lint go-test go-test-race go-test-cgocheck2 go-test-nocgo \
        cpp-test cpp-test-asan cpp-test-tsan bench fuzz clean

all: test

demo:
	$(GO) run ./cmd/mooncake-demo $(DEMO_ARGS)

test: lint go-test go-test-nocgo go-test-race go-test-cgocheck2 cpp-test
	@echo "make test: all passed"

check: test

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	CGO_ENABLED=0 $(GO) vet $(PKGS)

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
