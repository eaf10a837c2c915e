package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// TestMain lets the test binary be the decode child of -processes 2.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTwoProcesses: prefill in this process, decode in a child, over the
// native engine (make test-native).
func TestTwoProcesses(t *testing.T) {
	if mooncake.Backend().Name != "native" {
		t.Skip("two processes need the native engine (make test-native)")
	}
	for _, meta := range []string{os.Getenv("MCGO_TEST_METADATA"), "P2PHANDSHAKE"} {
		o, err := parse([]string{"-processes", "2", "-metadata", meta}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var out bytes.Buffer
		err = run(ctx, o, &out)
		cancel()
		if err != nil || !strings.Contains(out.String(), "decode: verified 128 pages") {
			t.Fatalf("%s: %v\n%s", meta, err, out.String())
		}
		t.Logf("%s:\n%s", meta, out.String())
	}
}

func TestPushAndVerify(t *testing.T) {
	if mooncake.Backend().Name != "embedded" {
		t.Skip("the in-process run of the default build")
	}
	o, err := parse([]string{"-pages", "16", "-layers", "5", "-seed", "7"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, o, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"5 requests coalesced", "80 one per buffer", "then 5 timed rounds", "coalesced: ",
		"push: 16 pages in 5 requests", "notification sent", "decode: verified 16 pages"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-pages", "0"}, {"-layers", "-1"}, {"-processes", "3"}, {"stray"}, {"-pages", "70000"}, {"-rounds", "0"},
		{"-host", ""}, {"-host", "127.0.0.1:5000"}, {"-timeout", "-1s"}, {"-timeout", "0s"}, {"-role", "bogus"}, {"-protocol", "udp"}} {
		_, err := parse(args, io.Discard)
		if err == nil {
			t.Errorf("%q accepted", args)
		} else if len(args) > 0 && strings.HasPrefix(args[0], "-") && !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%q: %v does not name the flag", args, err)
		}
	}
	if mooncake.Backend().Name == "embedded" {
		if _, err := parse([]string{"-processes", "2"}, io.Discard); err == nil {
			t.Error("two processes accepted on the embedded engine")
		}
	}
}

// TestMedianAndRatios: the median of odd and even counts, and the ratios
// taken round by round (not from the sorted times).
func TestMedianAndRatios(t *testing.T) {
	ms := time.Millisecond
	odd := &way{times: []time.Duration{1 * ms, 2 * ms, 9 * ms}}
	even := &way{times: []time.Duration{1 * ms, 2 * ms, 4 * ms, 9 * ms}}
	if odd.median() != 2*ms || even.median() != 3*ms {
		t.Errorf("medians %v, %v", odd.median(), even.median())
	}
	a := &way{order: []time.Duration{1 * ms, 2 * ms}}
	b := &way{order: []time.Duration{8 * ms, 4 * ms}}
	if r := roundRatios([]*way{a, b}); len(r) != 2 || r[0] != 2 || r[1] != 8 {
		t.Errorf("ratios %v, want [2 8]", r)
	}
}
