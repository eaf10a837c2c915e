// Package mooncakeprom exports a mooncake.Store's counters (Store.Stats) as
// Prometheus metrics. It is a package of its own so that package mooncake
// does not depend on the Prometheus client.
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(mooncakeprom.NewCollector(st, prometheus.Labels{"store": "kv"}))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Metrics, each labelled with the operation (upstream's method name, e.g.
// "batch_get_into"):
//
//	mooncake_store_calls_total              calls that reached the engine
//	mooncake_store_keys_total               keys they carried
//	mooncake_store_bytes_total              bytes read, and bytes of the keys stored
//	mooncake_store_failed_calls_total       calls that failed, as a whole or for a key
//	mooncake_store_failed_keys_total        keys that failed
//	mooncake_store_errors_total{code}       failures by upstream's code name ("OBJECT_NOT_FOUND")
//	mooncake_store_call_duration_seconds    latency histogram (buckets 1 µs .. 16.8 s, doubling)
//
// and, for the operations whose single calls were combined (Config.Combining,
// docs/combining.md):
//
//	mooncake_store_combined_calls_total     single calls that crossed in one batch with others
//	mooncake_store_combined_batch_keys      histogram of those batches' key counts (2 .. 128)
package mooncakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mooncake-go/mooncake-go/mooncake"
)

// Collector collects one store's metrics; each scrape takes one
// Store.Stats snapshot.
type Collector struct {
	st                                                *mooncake.Store
	calls, keys, bytes, failedCalls, failedKeys, errs *prometheus.Desc
	latency                                           *prometheus.Desc
	combined, batchKeys                               *prometheus.Desc
}

// NewCollector returns a collector of st's metrics with constLabels on
// every metric (to tell several stores of one process apart).
func NewCollector(st *mooncake.Store, constLabels prometheus.Labels) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("mooncake_store_"+name, help, append([]string{"op"}, labels...), constLabels)
	}
	return &Collector{
		st:          st,
		calls:       d("calls_total", "Calls that reached the Mooncake engine."),
		keys:        d("keys_total", "Keys carried by those calls."),
		bytes:       d("bytes_total", "Bytes read, and bytes of the keys stored."),
		failedCalls: d("failed_calls_total", "Calls that failed as a whole or for at least one key."),
		failedKeys:  d("failed_keys_total", "Keys that failed."),
		errs:        d("errors_total", "Failures by Mooncake error code (per key for batches).", "code"),
		latency:     d("call_duration_seconds", "Latency of the calls."),
		combined:    d("combined_calls_total", "Single calls that crossed into the engine in one batch with others."),
		batchKeys:   d("combined_batch_keys", "Key counts of the batches that carried combined calls."),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.calls, c.keys, c.bytes, c.failedCalls, c.failedKeys, c.errs, c.latency, c.combined, c.batchKeys} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, o := range c.st.Stats().Ops {
		op := string(o.Op)
		for _, m := range []struct {
			d *prometheus.Desc
			v uint64
		}{{c.calls, o.Calls}, {c.keys, o.Keys}, {c.bytes, o.Bytes}, {c.failedCalls, o.FailedCalls}, {c.failedKeys, o.FailedKeys}} {
			ch <- prometheus.MustNewConstMetric(m.d, prometheus.CounterValue, float64(m.v), op)
		}
		for code, n := range o.Errors {
			ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(n), op, code.String())
		}
		buckets := make(map[float64]uint64, len(o.Latency.Bounds))
		var cum uint64
		for i, b := range o.Latency.Bounds {
			cum += o.Latency.Counts[i]
			buckets[b.Seconds()] = cum
		}
		ch <- prometheus.MustNewConstHistogram(c.latency, o.Latency.Count, o.Latency.Sum.Seconds(), buckets, op)
		if o.CombinedBatches > 0 {
			ch <- prometheus.MustNewConstMetric(c.combined, prometheus.CounterValue, float64(o.Combined), op)
			count, sum, b := batchKeys(o)
			ch <- prometheus.MustNewConstHistogram(c.batchKeys, count, sum, b, op)
		}
	}
}

// batchKeys is OpStats.CombinedBatchSizes as a histogram: bucket i counts
// batches of 2^i+1 .. 2^(i+1) keys, so its upper bound is 2^(i+1). Every
// combined call is carried by exactly one batch, so the sum of the batches'
// sizes is o.Combined.
func batchKeys(o mooncake.OpStats) (count uint64, sum float64, buckets map[float64]uint64) {
	buckets = make(map[float64]uint64, len(o.CombinedBatchSizes))
	var cum uint64
	for i, n := range o.CombinedBatchSizes {
		cum += n
		buckets[float64(uint64(2)<<i)] = cum
	}
	return o.CombinedBatches, float64(o.Combined), buckets
}
