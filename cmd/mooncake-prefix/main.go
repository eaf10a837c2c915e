// Command mooncake-prefix tells a router how much of a prompt is already
// cached in a Mooncake cluster that SGLang's HiCache fills: token ids in,
// the number of leading pages stored (and the last one's hash) out, over
// HTTP, with Prometheus metrics.
//
//	mooncake-prefix -master 10.0.0.1:50051 -metadata http://10.0.0.1:8080/metadata \
//	    -page-size 64 -tp-size 8 -model Qwen/Qwen3-8B                       # direct: one existence call per request
//	mooncake-prefix ... -mode index -events tcp://10.0.0.1:5557              # from the master's KV events, no call per request
//	mooncake-prefix -master etcd://10.0.0.9:2379 ... -mode index \
//	    -events tcp://10.0.0.1:5557,tcp://10.0.0.2:5557                      # an HA group: the leader's publisher, followed
//	mooncake-prefix -master etcd://10.0.0.9:2379 ... -mode index -events leader:5557 # the leader recorded in etcd (or redis://)
//
//	curl -s localhost:8090/v1/lookup -d '{"tokens":[1,2,3,...]}'
//	{"pages":3,"hashed":4,"page_size":64,"last_hash":"9f2c..."}
//
// Modes:
//
//   - direct: each request hashes the prompt's pages as SGLang does and asks
//     the store whether every key of each page exists, in one batch call
//     (prefix.Lookup).
//   - index: the command follows the master's KV events (a master started
//     with --enable_kv_events) into an in-memory index of the pages stored
//     (prefix.Index) and answers from it; the store client is used only to
//     resynchronise after a gap in the events and to learn pages stored
//     while events were lost (docs/prefix.md, "Event-fed index"). With
//     the masters of an HA group listed, it follows the serving leader's
//     publisher (only the leader binds one) through failovers, and
//     resynchronises after each (docs/prefix.md, "HA").
//
// The cluster comes from the flags the other commands take (-master,
// -metadata, ...) or, without -master, from MOONCAKE_MASTER /
// MOONCAKE_CONFIG_PATH as SGLang configures its clients; with neither it
// runs on the embedded engine (an in-process cluster: useful for trying
// the API). The client mounts no memory by default (-segment 0).
//
// The key scheme flags must match the SGLang deployment whose pages are
// looked up: page size, TP and PP sizes, MLA, split heads, the model name
// and extra backend tag of newer SGLang, and the side pools (-pool).
//
// Endpoints: POST /v1/lookup, GET /metrics, GET /healthz (alive),
// GET /readyz (index mode: subscribed and not resynchronising).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mooncake-go/mooncake-go/cmd/internal/cliconfig"
	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/kvevents"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncakeprom"
)

const (
	modeDirect = "direct"
	modeIndex  = "index"
)

type options struct {
	listen      string
	mode        string
	events      string
	cluster     *cliconfig.Flags
	hash        prefix.HashConfig
	scheme      prefix.SchemeConfig
	maxPages    int
	resyncBatch int
	learnFor    time.Duration
	refresh     time.Duration
}

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("mooncake-prefix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	o.cluster = cliconfig.Register(fs, cliconfig.Defaults{Segment: "0", LocalBuffer: "0", EmbeddedMaster: "mooncake-prefix"})
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8090", "HTTP address to serve on")
	fs.StringVar(&o.mode, "mode", modeDirect, "direct (an existence call per request) or index (the master's KV events)")
	fs.StringVar(&o.events, "events", "", "index mode: the master's KV event publisher, tcp://host:port (its --kv_events_bind_endpoint); for an HA group, every master's, comma-separated, or leader:PORT (the leader recorded in -master's etcd:// or redis://, its publisher on PORT)")
	fs.IntVar(&o.maxPages, "max-pages", prefix.DefaultMaxPages, "index mode: pages the index holds at most")
	fs.IntVar(&o.resyncBatch, "resync-batch", prefix.DefaultResyncBatch, "index mode: pages per existence call of a resync")
	fs.DurationVar(&o.learnFor, "learn-for", prefix.DefaultLearnFor, "index mode: how long after a gap lookups' misses are checked in the store (negative: never)")
	fs.DurationVar(&o.refresh, "refresh", prefix.DefaultRefresh, "index mode: interval of the checks of every held page (the master publishes no removal for some operations; negative: never)")

	fs.IntVar(&o.hash.PageSize, "page-size", 64, "SGLang --page-size: tokens per page")
	bigram := fs.Bool("bigram", false, "EAGLE speculative decoding: pages of token pairs (SGLang's bigram radix key)")
	fs.BoolVar(&o.hash.WideTokens, "wide-tokens", false, "hash pages with ids >= 2^32 as SGLang's wide variant does, instead of refusing them")
	fs.IntVar(&o.hash.MemoPages, "hash-memo", 8192, "remember the digests of up to this many recently hashed pages, so prompts sharing a prefix hash it once (about 80 B + 4 B a token per page; 0: none)")
	k := &o.scheme.Keys
	fs.IntVar(&k.TPSize, "tp-size", 1, "tensor parallel size")
	fs.IntVar(&k.TPRank, "tp-rank", 0, "with -ranks one: the TP rank whose keys count")
	fs.IntVar(&k.PPSize, "pp-size", 1, "pipeline parallel size")
	fs.IntVar(&k.PPRank, "pp-rank", 0, "with -ranks one: the PP rank whose keys count")
	ranks := fs.String("ranks", "all", "all: a page counts when every rank stored it (SGLang takes the minimum over ranks); one: -tp-rank/-pp-rank only")
	fs.BoolVar(&k.RankReplicated, "mla", false, "MLA model (KV identical on every TP rank: keys carry no TP rank)")
	fs.IntVar(&k.SplitFactor, "split-factor", 0, "split heads: tp_lcm_size / tp_size (0 or 1: none)")
	fs.StringVar(&k.ModelName, "model", "", "model name of the keys (newer SGLang; \"/\" becomes \"-\")")
	fs.Func("backend-tag", "extra_backend_tag of SGLang's extra_config (the first key prefix part; may be empty)", func(s string) error {
		k.ExtraBackendTag = &s
		return nil
	})
	fs.StringVar(&k.Fingerprint, "fingerprint", "", "layout fingerprint of the keys (off in SGLang by default)")
	fs.BoolVar(&o.scheme.LogicalKV, "logical-kv", false, "the KV anchor has no buffer (DeepSeek V4): pages live in -pool pools only")
	fs.Func("pool", "a side pool of every page, NAME=KIND[,v][,temporal][,conv=N] (e.g. swa=mha,v; mamba=mamba,temporal,conv=2); repeat for more", func(s string) error {
		p, err := parsePool(s)
		if err == nil {
			o.scheme.Pools = append(o.scheme.Pools, p)
		}
		return err
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *bigram {
		o.hash.Mode = prefix.Bigram
	}
	switch *ranks {
	case "all":
		o.scheme.Ranks = prefix.AllRanks
	case "one":
		o.scheme.Ranks = prefix.OneRank
	default:
		return nil, fmt.Errorf("-ranks %q: want all or one", *ranks)
	}
	switch o.mode {
	case modeDirect:
	case modeIndex:
		if o.events == "" {
			return nil, errors.New("-mode index needs -events tcp://host:port (the master's --kv_events_bind_endpoint)")
		}
		if port, ok := strings.CutPrefix(o.events, leaderPrefix); ok {
			if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
				return nil, fmt.Errorf("-events %q: want leader:PORT, the port every master binds its publisher on", o.events)
			}
		} else if _, _, err := locatorOf(o.events); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("-mode %q: want direct or index", o.mode)
	}
	if o.maxPages <= 0 {
		return nil, fmt.Errorf("-max-pages %d: want a positive count", o.maxPages)
	}
	if o.resyncBatch <= 0 {
		return nil, fmt.Errorf("-resync-batch %d: want a positive count", o.resyncBatch)
	}
	return o, nil
}

// parsePool parses NAME=KIND[,v][,temporal][,conv=N].
func parsePool(s string) (prefix.PoolSpec, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return prefix.PoolSpec{}, fmt.Errorf("%q: want NAME=KIND[,v][,temporal][,conv=N]", s)
	}
	parts := strings.Split(rest, ",")
	p := prefix.PoolSpec{Name: hostcache.PoolName(name)}
	for k := hostcache.Kind(1); !strings.HasPrefix(k.String(), "kind("); k++ {
		if k.String() == parts[0] {
			p.Shape.Kind = k
		}
	}
	if p.Shape.Kind == hostcache.KindInvalid {
		return p, fmt.Errorf("%q: unknown pool kind %q", s, parts[0])
	}
	for _, a := range parts[1:] {
		switch {
		case a == "v":
			p.Shape.HasV = true
		case a == "temporal":
			p.Shape.MambaTemporal = true
		case strings.HasPrefix(a, "conv="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "conv="))
			if err != nil || n < 0 {
				return p, fmt.Errorf("%q: conv=%q: want a count", s, strings.TrimPrefix(a, "conv="))
			}
			p.Shape.MambaConv = n
		default:
			return p, fmt.Errorf("%q: unknown pool attribute %q", s, a)
		}
	}
	return p, nil
}

func main() {
	o, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mooncake-prefix:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mooncake-prefix:", err)
		os.Exit(1)
	}
}

// run opens the store, builds the service and serves until ctx ends.
func run(ctx context.Context, o *options, out io.Writer) error {
	cfg, src, err := o.cluster.Config()
	if err != nil {
		return err
	}
	st, err := mooncake.Open(cfg)
	if err != nil {
		return fmt.Errorf("store (%s, master %s): %w", src, cfg.MasterServerAddress, err)
	}
	defer st.Close()
	svc, err := newService(ctx, o, st, cfg)
	if err != nil {
		return err
	}
	defer svc.close()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "mooncake-prefix: %s mode, store %s (%s, %s), serving http://%s/v1/lookup\n",
		o.mode, cfg.MasterServerAddress, src, mooncake.Backend().Name, ln.Addr())
	hs := &http.Server{Handler: svc.handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}

// service is the server with what it runs on.
type service struct {
	*server
	x   *prefix.Index
	sub *kvevents.Subscriber
	loc kvevents.Locator
}

// newService builds the lookup of o's mode over st (a client of cfg's
// cluster): direct, or an index subscribed to the master's events
// (resynchronised through st).
func newService(ctx context.Context, o *options, st *mooncake.Store, cfg mooncake.Config) (*service, error) {
	h, err := prefix.NewHasher(o.hash)
	if err != nil {
		return nil, err
	}
	sch, err := prefix.NewScheme(o.scheme)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(mooncakeprom.NewCollector(st, nil))
	m := newMetrics(reg, o.mode)
	if o.hash.MemoPages > 0 {
		reg.MustRegister(newMemoCollector(h))
	}
	s := &service{server: &server{mode: o.mode, pageSize: o.hash.PageSize, m: m, reg: reg}}
	if o.mode == modeDirect {
		l := prefix.NewLookup(h, sch, st)
		reg.MustRegister(newLookupCollector(l))
		s.lookup = l.LookupInt64
		return s, nil
	}
	s.x, err = prefix.NewIndex(prefix.IndexConfig{Scheme: sch, Hasher: h, MaxPages: o.maxPages, Resync: st,
		ResyncBatch: o.resyncBatch, LearnFor: o.learnFor, Refresh: o.refresh})
	if err != nil {
		return nil, err
	}
	s.lookup = func(_ context.Context, prior *prefix.Digest, tokens []int64) (prefix.Result, error) {
		return s.x.LookupInt64(prior, tokens)
	}
	loc, err := locate(o.events, cfg)
	if err != nil {
		s.x.Close()
		return nil, err
	}
	s.loc = loc
	s.sub, err = kvevents.Subscribe(ctx, kvevents.SubscriberConfig{
		Locator: loc,
		Handler: observed{x: s.x, m: m, now: time.Now},
	})
	if err != nil {
		s.x.Close()
		return nil, err
	}
	reg.MustRegister(newIndexCollector(s.x, s.sub.Stats))
	s.ready = func() (bool, string) {
		switch ss, xs := s.sub.Stats(), s.x.Stats(); {
		case !ss.Connected:
			return false, "not connected to the event publisher " + o.events
		case xs.Resyncing:
			return false, "resynchronising after a gap in the events"
		}
		return true, ""
	}
	return s, nil
}

func (s *service) close() {
	if s.sub != nil {
		s.sub.Close()
	}
	if c, ok := s.loc.(io.Closer); ok {
		c.Close()
	}
	if s.x != nil {
		s.x.Close()
	}
}
