package main

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
)

// metrics are the command's own Prometheus metrics (the store client's are
// mooncakeprom's, registered next to them).
type metrics struct {
	lookups  *prometheus.CounterVec // by HTTP status code
	duration prometheus.Histogram
	pages    *prometheus.CounterVec // hashed, cached
	lag      prometheus.Histogram
	gaps     *prometheus.CounterVec // by reason
}

func newMetrics(reg prometheus.Registerer, mode string) *metrics {
	c := prometheus.Labels{"mode": mode}
	m := &metrics{
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mooncake_prefix_lookups_total",
			Help: "Lookup requests answered, by HTTP status code.", ConstLabels: c}, []string{"code"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mooncake_prefix_lookup_duration_seconds",
			Help: "Time to answer a lookup request (decoding, hashing, the lookup), from 1 µs doubling.", ConstLabels: c,
			Buckets: prometheus.ExponentialBuckets(1e-6, 2, 24)}),
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mooncake_prefix_pages_total",
			Help: "Pages of the prompts looked up: hashed (full pages) and cached (leading pages stored).", ConstLabels: c}, []string{"kind"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mooncake_prefix_event_lag_seconds",
			Help:    "From an event batch's timestamp (ms, the master's clock) to its events being visible in the index.",
			Buckets: prometheus.ExponentialBuckets(250e-6, 2, 16)}),
		gaps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mooncake_prefix_event_gaps_total",
			Help: "Gaps in the event stream (each schedules a resync), by reason."}, []string{"reason"}),
	}
	reg.MustRegister(m.lookups, m.duration, m.pages)
	if mode == modeIndex {
		reg.MustRegister(m.lag, m.gaps)
	}
	return m
}

func (m *metrics) observeLookup(code int, d time.Duration) {
	m.lookups.WithLabelValues(strconv.Itoa(code)).Inc()
	m.duration.Observe(d.Seconds())
}

func (m *metrics) observePages(r prefix.Result) {
	m.pages.WithLabelValues("hashed").Add(float64(r.Hashed))
	m.pages.WithLabelValues("cached").Add(float64(r.Pages))
}

// observed is the index as the subscriber's handler, measuring how long
// each batch took from the master's timestamp to being visible.
type observed struct {
	x   *prefix.Index
	m   *metrics
	now func() time.Time
}

func (o observed) HandleBatch(b *kvevents.Batch) {
	o.x.HandleBatch(b)
	if !b.Time.IsZero() {
		o.m.lag.Observe(max(o.now().Sub(b.Time), 0).Seconds())
	}
}

func (o observed) HandleGap(g kvevents.Gap) {
	o.m.gaps.WithLabelValues(g.Reason.String()).Inc()
	o.x.HandleGap(g)
}

// indexCollector exports an index's and a subscription's counters, one
// Stats snapshot of each per scrape.
type indexCollector struct {
	x   *prefix.Index
	sub func() kvevents.SubscriberStats
	d   map[string]*prometheus.Desc
}

func newIndexCollector(x *prefix.Index, sub func() kvevents.SubscriberStats) *indexCollector {
	c := &indexCollector{x: x, sub: sub, d: map[string]*prometheus.Desc{}}
	for _, m := range []struct {
		name, help string
		labels     []string
	}{
		{"index_pages", "Pages the index holds: held (complete or not) and complete (what lookups count).", []string{"state"}},
		{"index_events_total", "Events by outcome: applied, ignored (not this scheme's keys), unkeyed (no object key).", []string{"outcome"}},
		{"index_evictions_total", "Pages forgotten to stay within -max-pages.", nil},
		{"index_resyncs_total", "Resync passes finished (after gaps).", nil},
		{"index_refreshes_total", "Periodic passes over the held pages finished (-refresh).", nil},
		{"index_resyncing", "1 while a resync is due or running.", nil},
		{"index_resync_pages_total", "Pages checked by resyncs and refreshes: checked, dropped (absent, confirmed), fixed (components differed), restored (found again by the confirmation).", []string{"outcome"}},
		{"index_resync_errors_total", "Existence calls of resyncs that failed (retried).", nil},
		{"index_learning", "1 while lookups' misses are checked in the store.", nil},
		{"index_learn_checks_total", "Existence calls made for lookups' misses.", nil},
		{"index_learned_pages_total", "Complete pages found by those calls.", nil},
		{"index_learn_dropped_total", "Misses not checked because the queue was full.", nil},
		{"subscriber_connected", "1 while connected to a publisher.", nil},
		{"subscriber_batches_total", "Event batches received.", nil},
		{"subscriber_reconnects_total", "Connections made after the first.", nil},
		{"subscriber_missed_total", "Batch sequence numbers skipped (lost batches).", nil},
		{"subscriber_decode_errors_total", "Messages dropped because they did not decode.", nil},
	} {
		c.d[m.name] = prometheus.NewDesc("mooncake_prefix_"+m.name, m.help, m.labels, nil)
	}
	return c
}

func (c *indexCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.d {
		ch <- d
	}
}

func (c *indexCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.x.Stats()
	put := func(name string, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.d[name], t, v, labels...)
	}
	counter, gauge := prometheus.CounterValue, prometheus.GaugeValue
	put("index_pages", gauge, float64(s.Pages), "held")
	put("index_pages", gauge, float64(s.Complete), "complete")
	put("index_events_total", counter, float64(s.Events), "applied")
	put("index_events_total", counter, float64(s.Ignored), "ignored")
	put("index_events_total", counter, float64(s.Unkeyed), "unkeyed")
	put("index_evictions_total", counter, float64(s.Evictions))
	put("index_resyncs_total", counter, float64(s.Resyncs))
	put("index_refreshes_total", counter, float64(s.Refreshes))
	put("index_resyncing", gauge, b2f(s.Resyncing))
	put("index_resync_pages_total", counter, float64(s.ResyncPages), "checked")
	put("index_resync_pages_total", counter, float64(s.ResyncDropped), "dropped")
	put("index_resync_pages_total", counter, float64(s.ResyncFixed), "fixed")
	put("index_resync_pages_total", counter, float64(s.ResyncRestored), "restored")
	put("index_resync_errors_total", counter, float64(s.ResyncErrors))
	put("index_learning", gauge, b2f(s.Learning))
	put("index_learn_checks_total", counter, float64(s.LearnChecks))
	put("index_learned_pages_total", counter, float64(s.Learned))
	put("index_learn_dropped_total", counter, float64(s.LearnDropped))
	if c.sub != nil {
		ss := c.sub()
		put("subscriber_connected", gauge, b2f(ss.Connected))
		put("subscriber_batches_total", counter, float64(ss.Batches))
		put("subscriber_reconnects_total", counter, float64(ss.Reconnects))
		put("subscriber_missed_total", counter, float64(ss.Missed))
		put("subscriber_decode_errors_total", counter, float64(ss.DecodeErrors))
	}
}

// lookupCollector exports a direct Lookup's counters: requests, the
// existence calls made for them, and the requests combined into another's
// call.
type lookupCollector struct {
	l                        *prefix.Lookup
	lookups, calls, combined *prometheus.Desc
}

func newLookupCollector(l *prefix.Lookup) *lookupCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("mooncake_prefix_direct_"+name, help, nil, nil)
	}
	return &lookupCollector{l: l,
		lookups:  d("lookups_total", "Direct lookups that checked at least one page."),
		calls:    d("exist_calls_total", "BatchIsExist calls made for them."),
		combined: d("combined_total", "Lookups answered by a call made together with others."),
	}
}

func (c *lookupCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lookups
	ch <- c.calls
	ch <- c.combined
}

func (c *lookupCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.l.Stats()
	ch <- prometheus.MustNewConstMetric(c.lookups, prometheus.CounterValue, float64(s.Lookups))
	ch <- prometheus.MustNewConstMetric(c.calls, prometheus.CounterValue, float64(s.Calls))
	ch <- prometheus.MustNewConstMetric(c.combined, prometheus.CounterValue, float64(s.Combined))
}

// memoCollector exports the hasher's memo (-hash-memo): pages found in it
// and pages hashed, and the pages it holds.
type memoCollector struct {
	h             *prefix.Hasher
	lookups, held *prometheus.Desc
}

func newMemoCollector(h *prefix.Hasher) *memoCollector {
	return &memoCollector{h: h,
		lookups: prometheus.NewDesc("mooncake_prefix_hash_memo_lookups_total",
			"Pages looked up in the hash memo: hit (digest remembered) or miss (hashed).", []string{"outcome"}, nil),
		held: prometheus.NewDesc("mooncake_prefix_hash_memo_pages", "Pages the hash memo holds.", nil, nil),
	}
}

func (c *memoCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lookups
	ch <- c.held
}

func (c *memoCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.h.MemoStats()
	ch <- prometheus.MustNewConstMetric(c.lookups, prometheus.CounterValue, float64(s.Hits), "hit")
	ch <- prometheus.MustNewConstMetric(c.lookups, prometheus.CounterValue, float64(s.Misses), "miss")
	ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(s.Pages))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
