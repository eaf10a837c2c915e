//go:build cgo

package mooncakeprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mooncake-go/mooncake-go/mooncake/mooncakeprom"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

func TestCollector(t *testing.T) {
	st := mooncaketest.Open(t)
	k := mooncaketest.Key(t, "k")
	if err := st.Put(k, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := st.Get(k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Get(k + "-missing"); err == nil {
		t.Fatal("get of a missing key succeeded")
	}
	c := mooncakeprom.NewCollector(st, prometheus.Labels{"store": "test"})
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
	want := `
# HELP mooncake_store_calls_total Calls that reached the Mooncake engine.
# TYPE mooncake_store_calls_total counter
mooncake_store_calls_total{op="get",store="test"} 4
mooncake_store_calls_total{op="put",store="test"} 1
# HELP mooncake_store_bytes_total Bytes read, and bytes of the keys stored.
# TYPE mooncake_store_bytes_total counter
mooncake_store_bytes_total{op="get",store="test"} 300
mooncake_store_bytes_total{op="put",store="test"} 100
# HELP mooncake_store_errors_total Failures by Mooncake error code (per key for batches).
# TYPE mooncake_store_errors_total counter
mooncake_store_errors_total{code="OBJECT_NOT_FOUND",op="get",store="test"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"mooncake_store_calls_total", "mooncake_store_bytes_total", "mooncake_store_errors_total"); err != nil {
		t.Error(err)
	}
	// One histogram per operation, counting every call.
	if n := testutil.CollectAndCount(c, "mooncake_store_call_duration_seconds"); n != 2 {
		t.Errorf("%d latency histograms, want 2", n)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "mooncake_store_call_duration_seconds" {
			for _, m := range mf.GetMetric() {
				if h := m.GetHistogram(); h.GetSampleCount() == 0 || h.GetSampleSum() <= 0 {
					t.Errorf("histogram %v has no samples", m.GetLabel())
				}
			}
		}
	}
}
