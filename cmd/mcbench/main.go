// Command mcbench benchmarks the mooncake-go binding with the workloads of
// upstream's Python store benchmark (store_kv_bench: verify_write, fill,
// write_perf, read_perf, mixed_rw; copying and zero-copy APIs, single and
// batch) and the HiCache workloads this project exists for (128-page
// batches of a layer-first DeepSeek-V3 MLA pool and a page-first
// Llama-3-8B MHA pool through hostcache, and the multi-buffer calls), plus
// a plain memcpy of the same bytes as the bandwidth reference.
//
// The command is the runner and the server of the serve protocol; the plan
// is cmd/internal/benchplan's, the drive cmd/internal/benchdrive's and the report
// cmd/internal/benchreport's. scripts/bench_python.py runs the plan file that
// -list writes through upstream's Python client and writes the same JSON;
// `make bench-compare` runs both in turn against one local cluster and
// `mcbench compare` puts them side by side (docs/benchmarks.md).
//
// Usage:
//
//	mcbench [flags]                  run the plan (embedded engine unless -master is given)
//	mcbench -quick                   a tiny plan, a few seconds
//	mcbench -list [flags] >plan      write the plan file and exit
//	mcbench -plan plan [flags]       run a plan file (only cluster and output flags beside it)
//	mcbench compare [flags]          medians over runs, Go/Python table, summary, chart (see mcbench compare -h)
//	mcbench drive [flags] -- FLAGS   Go and Python clients side by side, case by case (make bench-compare)
//	mcbench te [flags]               upstream transfer_engine_bench's initiator/target through the binding
//	mcbench te-compare [flags]       mcbench te against transfer_engine_bench, paired runs (make bench-te-compare)
//
// Against a live cluster (native build, make native):
//
//	mcbench -master 127.0.0.1:50051 -metadata http://127.0.0.1:8080/metadata -json go.json
//
// Every request is timed around the client call and its result checks;
// ops/s counts keys (objects) per second of that time, GB/s is 1e9 bytes
// per second; latencies are per request (one call, or one batch).
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
	"github.com/mooncake-go/mooncake-go/cmd/internal/cliconfig"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

func main() {
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == "compare":
		err = runCompare(os.Args[2:], os.Stdout)
	case len(os.Args) > 1 && os.Args[1] == "drive":
		err = runDrive(os.Args[2:], os.Stdout, os.Stderr)
	case len(os.Args) > 1 && os.Args[1] == "te":
		err = runTE(os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
	case len(os.Args) > 1 && os.Args[1] == "te-compare":
		err = runTECompare(os.Args[2:], os.Stdout, os.Stderr)
	default:
		err = run(os.Args[1:], os.Stdout, os.Stderr)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcbench:", err)
		os.Exit(1)
	}
}

type options struct {
	cfg       mooncake.Config
	source    string
	params    Params
	cases     []Case // the plan, after -only
	duration  time.Duration
	warmup    time.Duration
	genBytes  int64
	rwmixread int
	seed      uint64
	jsonPath  string
	cpuprof   string
	progress  bool
	list      bool
	populate  bool
	thp       bool
	prefault  string
	memcpyRef bool
	serve     bool
	ownSeg    bool
	hashMemo  int
	// twins is where this process runs the combining twins (-twins).
	twins string
	// batchWriteKeys and batchWriteBytes are the Go client's
	// Config.BatchWriteKeys and BatchWriteBytes (-batch-write-keys, -bytes).
	batchWriteKeys  int
	batchWriteBytes int64
	// segment and localBuffer are the sizes of -segment and -local-buffer
	// (the environment's config, when it is used, has its own).
	segment, localBuffer mooncake.Size
	// connArgs are the connection flags as given, for the clients that
	// mcbench drive starts on the same cluster.
	connArgs []string
	// goArgs are the Go client's own flags as given (-hash-memo,
	// -batch-write-keys, -batch-write-bytes), which mcbench drive passes to its Go clients.
	goArgs []string
}

// Where a Go client runs the combining twins (-twins).
const (
	twinsHere  = "here"
	twinsApart = "apart"
	twinsOnly  = "only"
)

// clientFlags are the flags that are not part of the plan: which cluster,
// and what this one process does with its results. Every other flag shapes
// the plan or how it is measured, so it goes into the plan file (-list) and
// may not be given together with -plan.
var clientFlags = append([]string{"plan", "list", "serve", "own-segment", "hash-memo", "batch-write-keys", "batch-write-bytes", "twins", "json", "cpuprofile", "progress"},
	cliconfig.ConnectionFlags...)

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("mcbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mcbench [flags]   |   mcbench compare|drive|te|te-compare [flags]\n\n"+
			"Benchmarks the Go binding with upstream store_kv_bench's scenarios and the HiCache workloads.\n"+
			"Runs on the embedded engine unless -master is given (native build).\n\nflags:\n")
		fs.PrintDefaults()
	}
	d := benchplan.DefaultParams()
	cluster := cliconfig.Register(fs, cliconfig.Defaults{Segment: "2gb", LocalBuffer: "256mb", EmbeddedMaster: "embedded-mcbench"})
	quick := fs.Bool("quick", false, "tiny plan and short phases (tests, smoke runs); other plan flags still apply")
	scen := fs.String("scenarios", strings.Join(d.Scenarios, ","), "scenarios to run, comma-separated")
	apis := fs.String("apis", "plain,zcopy", "store_kv_bench APIs: plain (copying) and/or zcopy (zero-copy)")
	sizes := fs.String("sizes", "4KiB,64KiB,1MiB", "object sizes of the store_kv_bench scenarios")
	batches := fs.String("batches", "1,32,1024", "keys per request (1 = single-object calls)")
	maxBatch := fs.String("max-batch-bytes", "128MiB", "skip size x batch pairs above this; HiCache batches are halved to fit")
	dataset := fs.String("dataset-bytes", "256MiB", "bytes written by count-based cases and prepared for read cases")
	maxObj := fs.Int("max-objects", d.MaxObjects, "at most this many objects per count-based case or dataset")
	mlaP := fs.String("mla-page-sizes", "1,64", "page sizes (tokens) of the MLA layer_first pool; one page = 61 buffers of P*1152 B")
	mhaP := fs.String("mha-page-sizes", "1,64", "page sizes (tokens) of the MHA page_first pool; one page = K and V objects of P*64 KiB")
	hiPages := fs.Int("hicache-pages", d.HiCachePages, "pages per HiCache request (SGLang's STORAGE_BATCH_SIZE)")
	callers := fs.String("callers", "4,16,64", "caller counts above one at which the concurrency cases (single 4 KiB puts and gets, "+
		"1024 x 4 KiB zero-copy batches, HiCache MLA one-token pages) run again, concurrently; \"\" for none")
	prefixPages := fs.Int("prefix-pages", d.PrefixPages, "prefix_lookup (named in -scenarios): pages per prompt")
	prefixPage := fs.Int("prefix-page-size", d.PrefixPageSize, "prefix_lookup: tokens per page")
	shapes := fs.String("multi-shapes", "128x61x1152,16x61x73728", "KEYSxBUFFERSxSIZE shapes of multi_put, multi_get and memcpy")
	dur := fs.Duration("duration", time.Second, "measured time of each time-based case")
	warm := fs.Duration("warmup", 200*time.Millisecond, "unmeasured warm-up of each time-based case")
	gen := fs.String("gen-bytes", "", "written bytes after which a case's fresh keys are removed (outside the clock; default segment/4)")
	mix := fs.Int("rwmixread", 70, "mixed_rw: percent of requests that read")
	seed := fs.Uint64("seed", 1, "mixed_rw random seed")
	only := fs.String("only", "", "run only cases whose name matches this regular expression")
	planPath := fs.String("plan", "", "run the plan of this file (written by mcbench -list) instead of building one from the plan flags")
	o := &options{}
	fs.StringVar(&o.jsonPath, "json", "", "write results as JSON to this file (- for stdout, then no table)")
	fs.StringVar(&o.cpuprof, "cpuprofile", "", "write a CPU profile of the measured cases to this file")
	fs.BoolVar(&o.progress, "progress", false, "show a progress bar even when stderr is not a terminal")
	fs.BoolVar(&o.list, "list", false, "print the plan file (a header line with the parameters, then one JSON case per line) and exit")
	combining := fs.Bool("combining", d.Combining, "follow every concurrency case (with one caller and with -callers) by its twin, NAME/combining, "+
		"run on a second store opened with mooncake.Config.Combining on (docs/combining.md); every other case runs with combining off. "+
		"The Go client's only: Python and the C floor answer twins with no results")
	fs.BoolVar(&o.populate, "populate", true, "pre-fault registered memory (MAP_POPULATE)")
	fs.BoolVar(&o.thp, "thp", true, "back registered memory and the memcpy reference with transparent huge pages (MADV_HUGEPAGE); upstream's segment gets them from GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (make bench-compare sets it)")
	fs.BoolVar(&o.serve, "serve", false, "run cases named on stdin, one per line, and answer each with a JSON line (mcbench drive)")
	fs.IntVar(&o.hashMemo, "hash-memo", 0, "prefix_lookup: the Go client's hasher remembers this many pages (prefix.HashConfig.MemoPages; mooncake-prefix's -hash-memo); "+
		"0 hashes every page of every lookup, as the Python counterpart does")
	fs.StringVar(&o.twins, "twins", twinsHere, "where the combining twins run: "+twinsHere+" (on a second store in this process), "+
		twinsApart+" (not here: answered with no results; mcbench drive runs them in a process of its own) or "+
		twinsOnly+" (only the twins, on this process's one store, opened with combining on)")
	fs.IntVar(&o.batchWriteKeys, "batch-write-keys", 0, "the Go client's Config.BatchWriteKeys: at most this many keys of zero-copy batch writes in upstream at once (0: the default, mooncake.DefaultBatchWriteKeys; negative: no bound)")
	fs.Int64Var(&o.batchWriteBytes, "batch-write-bytes", 0, "the Go client's Config.BatchWriteBytes: at most this many bytes of zero-copy batch writes in upstream at once (0: the default, mooncake.DefaultBatchWriteBytes; negative: no bound)")
	fs.BoolVar(&o.ownSeg, "own-segment", false, "put every object in this client's own segment (ReplicateConfig.preferred_segments), "+
		"for runs where several clients are connected")
	fs.BoolVar(&o.memcpyRef, "memcpy-ref", true, "large-page cases (objects >= 1 MiB) also time a plain copy of the same bytes after their requests")
	fs.StringVar(&o.prefault, "prefault", "auto", "before the first case, write and remove objects filling most of the segment, so writes "+
		"land on resident pages as in a long-running client: on, off, or auto (on for a live cluster)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		set[f.Name] = true
		if slices.Contains(cliconfig.ConnectionFlags, f.Name) {
			o.connArgs = append(o.connArgs, "-"+f.Name, f.Value.String())
		}
		if f.Name == "hash-memo" || f.Name == "batch-write-keys" || f.Name == "batch-write-bytes" {
			o.goArgs = append(o.goArgs, "-"+f.Name, f.Value.String())
		}
	})

	if *planPath != "" {
		for name := range set {
			if !slices.Contains(clientFlags, name) {
				return nil, fmt.Errorf("-%s is part of the plan: give it to the mcbench -list that wrote %s", name, *planPath)
			}
		}
		if err := o.loadPlan(*planPath, cluster); err != nil {
			return nil, err
		}
	} else {
		p := d
		if *quick {
			p = benchplan.QuickParams()
			if !set["duration"] {
				*dur = 100 * time.Millisecond
			}
			if !set["warmup"] {
				*warm = 20 * time.Millisecond
			}
			if !set["segment"] {
				cluster.Segment = "256mb"
			}
			if !set["local-buffer"] {
				cluster.LocalBuffer = "32mb"
			}
		}
		var err error
		if set["scenarios"] || !*quick {
			if p.Scenarios, err = benchplan.ParseList(*scen, benchplan.ParseString); err != nil {
				return nil, err
			}
		}
		if set["apis"] || !*quick {
			if p.APIs, err = benchplan.ParseList(*apis, benchplan.ParseString); err != nil {
				return nil, err
			}
		}
		if set["sizes"] || !*quick {
			if p.Sizes, err = benchplan.ParseList(*sizes, benchplan.ParseSize); err != nil {
				return nil, fmt.Errorf("-sizes: %w", err)
			}
		}
		if set["batches"] || !*quick {
			if p.Batches, err = benchplan.ParseList(*batches, benchplan.ParseCount); err != nil {
				return nil, fmt.Errorf("-batches: %w", err)
			}
		}
		if set["max-batch-bytes"] || !*quick {
			if p.MaxBatchBytes, err = benchplan.ParseSize(*maxBatch); err != nil {
				return nil, fmt.Errorf("-max-batch-bytes: %w", err)
			}
		}
		if set["dataset-bytes"] || !*quick {
			if p.DatasetBytes, err = benchplan.ParseSize(*dataset); err != nil {
				return nil, fmt.Errorf("-dataset-bytes: %w", err)
			}
		}
		if set["max-objects"] || !*quick {
			p.MaxObjects = *maxObj
		}
		if set["mla-page-sizes"] || !*quick {
			if p.MLAPageSizes, err = benchplan.ParseList(*mlaP, benchplan.ParseCount); err != nil {
				return nil, fmt.Errorf("-mla-page-sizes: %w", err)
			}
		}
		if set["mha-page-sizes"] || !*quick {
			if p.MHAPageSizes, err = benchplan.ParseList(*mhaP, benchplan.ParseCount); err != nil {
				return nil, fmt.Errorf("-mha-page-sizes: %w", err)
			}
		}
		if set["hicache-pages"] || !*quick {
			p.HiCachePages = *hiPages
		}
		if set["multi-shapes"] || !*quick {
			if p.MultiShapes, err = benchplan.ParseList(*shapes, benchplan.ParseShape); err != nil {
				return nil, fmt.Errorf("-multi-shapes: %w", err)
			}
		}
		if set["prefix-pages"] || !*quick {
			p.PrefixPages = *prefixPages
		}
		if set["prefix-page-size"] || !*quick {
			p.PrefixPageSize = *prefixPage
		}
		if set["callers"] || !*quick {
			if p.Callers, err = benchplan.ParseList(*callers, benchplan.ParseCount); err != nil {
				return nil, fmt.Errorf("-callers: %w", err)
			}
		}
		p.Combining = *combining
		o.params = p
		o.duration, o.warmup, o.rwmixread, o.seed = *dur, *warm, *mix, *seed
		if o.segment, o.localBuffer, err = cluster.Sizes(); err != nil {
			return nil, err
		}
		o.genBytes = int64(o.segment) / 4
		if *gen != "" {
			g, err := benchplan.ParseSize(*gen)
			if err != nil || g <= 0 {
				return nil, fmt.Errorf("-gen-bytes: bad size %q", *gen)
			}
			o.genBytes = int64(g)
		}
		if o.cases, err = p.Plan(); err != nil {
			return nil, err
		}
		if *only != "" {
			rx, err := regexp.Compile(*only)
			if err != nil {
				return nil, fmt.Errorf("-only: %w", err)
			}
			o.cases = slices.DeleteFunc(o.cases, func(c Case) bool { return !rx.MatchString(c.Name) })
		}
	}
	if o.duration <= 0 || o.warmup < 0 {
		return nil, errors.New("-duration must be positive and -warmup not negative")
	}
	if o.prefault != "on" && o.prefault != "off" && o.prefault != "auto" {
		return nil, errors.New("-prefault must be on, off or auto")
	}
	if o.twins != twinsHere && o.twins != twinsApart && o.twins != twinsOnly {
		return nil, fmt.Errorf("-twins %q: want %s, %s or %s", o.twins, twinsHere, twinsApart, twinsOnly)
	}
	if o.rwmixread < 0 || o.rwmixread > 100 {
		return nil, errors.New("-rwmixread must be within [0, 100]")
	}
	cfg, src, err := cluster.Config()
	if err != nil {
		return nil, err
	}
	// The ordinary cases are the "off" rows beside the combining twins, so
	// they say so rather than follow the binding's default.
	cfg.Combining = mooncake.CombiningOff
	if o.twins == twinsOnly {
		cfg.Combining = mooncake.CombiningOn
	}
	cfg.BatchWriteKeys, cfg.BatchWriteBytes = o.batchWriteKeys, o.batchWriteBytes
	o.cfg, o.source = cfg, string(src)
	return o, nil
}

// planFile is the plan as -list writes it.
func (o *options) planFile() benchplan.File {
	return benchplan.File{Params: o.params, Cases: o.cases, Settings: benchplan.Settings{
		DurationS: o.duration.Seconds(), WarmupS: o.warmup.Seconds(), GenBytes: o.genBytes, RWMixRead: o.rwmixread,
		Seed: o.seed, Segment: uint64(o.segment), LocalBuffer: uint64(o.localBuffer), Populate: o.populate, THP: o.thp,
		MemcpyRef: o.memcpyRef, Prefault: o.prefault}}
}

// loadPlan takes the plan and its settings from a plan file, as if the
// flags that wrote it had been given.
func (o *options) loadPlan(path string, cluster *cliconfig.Flags) error {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := benchplan.ReadFile(r)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s := f.Settings
	o.params, o.cases = f.Params, f.Cases
	o.duration = time.Duration(math.Round(s.DurationS * 1e9))
	o.warmup = time.Duration(math.Round(s.WarmupS * 1e9))
	o.genBytes, o.rwmixread, o.seed = s.GenBytes, s.RWMixRead, s.Seed
	o.segment, o.localBuffer = mooncake.Size(s.Segment), mooncake.Size(s.LocalBuffer)
	cluster.Segment, cluster.LocalBuffer = strconv.FormatUint(s.Segment, 10), strconv.FormatUint(s.LocalBuffer, 10)
	o.populate, o.thp, o.memcpyRef, o.prefault = s.Populate, s.THP, s.MemcpyRef, s.Prefault
	return nil
}

// prefaultSegment writes 32 MiB objects until 85% of the segment (below the
// master's eviction watermark) is used or a put fails, then removes them.
// Mooncake allocates the segment with aligned_alloc and never touches it, so
// without this the first writes to every page pay a page fault and the
// kernel's zeroing: a cost a long-running client does not see. Both clients
// do the same (scripts/bench_python.py --prefault).
func (b *bench) prefaultSegment() (int64, error) {
	const chunk = 32 << 20
	mem, err := hostmem.Alloc(uint64(chunk), hostmem.Options{Populate: true, TransparentHugePages: b.o.thp})
	if err != nil {
		return 0, err
	}
	defer mem.Free()
	if err := b.st.RegisterMemory(mem); err != nil {
		return 0, err
	}
	defer b.st.UnregisterBuffer(mem.Addr())
	limit := int64(b.o.cfg.GlobalSegmentSize) * 85 / 100
	var n int64
	for i := 0; n+chunk <= limit; i++ {
		if err := b.st.Raw().PutFrom(fmt.Sprintf("%s-pf-%06d", b.run, i), mem.Addr(), chunk); err != nil {
			break
		}
		n += chunk
	}
	if _, err := b.st.RemoveByRegex("^"+b.run+"-pf-", true); err != nil {
		return n, err
	}
	return n, nil
}

// stdin is where -serve reads case names (a variable for tests).
var stdin io.Reader = os.Stdin

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	plan := o.cases
	if o.list {
		return o.planFile().Write(stdout)
	}
	if len(plan) == 0 {
		return errors.New("the plan is empty (check -scenarios, -only and the sizes)")
	}
	if mooncake.Backend().Name == "embedded" && o.source != "embedded default" {
		fmt.Fprintf(stderr, "mcbench: note: this build has the embedded engine; %q names an in-process cluster (build with -tags mooncake_native for a live one)\n",
			o.cfg.MasterServerAddress)
	}
	st, err := mooncake.Open(o.cfg)
	if err != nil {
		return err
	}
	defer st.Close()

	var rb [4]byte
	_, _ = rand.Read(rb[:])
	b := &bench{st: st, o: o, run: hex.EncodeToString(rb[:])}
	if b.st, err = o.view(st); err != nil {
		return err
	}
	b.prog = newProgress(stderr, !o.serve && (o.progress || isTerminal(stderr)), len(plan))
	defer b.prog.stop()
	// The combining twins run on a store of their own, opened like the
	// first (its own segment, prefaulted the same way) with combining on,
	// up front, so that it connects when the first does.
	if o.twins == twinsOnly {
		b.combining = b
	} else if o.twins == twinsHere && slices.ContainsFunc(plan, func(c Case) bool { return c.Combining }) {
		cfg := o.cfg
		cfg.Combining = mooncake.CombiningOn
		cst, err := mooncake.Open(cfg)
		if err != nil {
			return fmt.Errorf("the combining store: %w", err)
		}
		defer cst.Close()
		b.combining = &bench{o: o, run: b.run, prog: b.prog}
		if b.combining.st, err = o.view(cst); err != nil {
			return err
		}
	}

	if o.cpuprof != "" {
		f, err := os.Create(o.cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	if o.prefault == "on" || (o.prefault == "auto" && mooncake.Backend().Name != "embedded") {
		benches := []*bench{b}
		if b.combining != nil && b.combining != b {
			benches = append(benches, b.combining)
		}
		for _, pb := range benches {
			which := "the segment"
			if pb == b.combining {
				which = "the combining store's segment"
			}
			t0 := time.Now()
			n, err := pb.prefaultSegment()
			if err != nil {
				return fmt.Errorf("prefault of %s: %w", which, err)
			}
			fmt.Fprintf(stderr, "mcbench: prefaulted %s: wrote and removed %d MiB in %.1fs\n", which, n>>20, time.Since(t0).Seconds())
		}
	}

	doc := Run{Schema: schema, Client: "go", Engine: mooncake.Backend().Name, Version: runtime.Version(),
		Host: hostInfo(), Started: time.Now().UTC().Format(time.RFC3339), Params: o.paramsJSON()}
	if o.serve {
		return b.serve(doc, plan, stdin, stdout)
	}
	for i, c := range plan {
		b.prog.begin(i, c.Name)
		res, err := b.runCase(i, c)
		if err != nil {
			b.prog.stop()
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		for _, r := range res {
			if r.Errors > 0 {
				doc.Failures = append(doc.Failures, fmt.Sprintf("%s: %d failed keys", r.Name, r.Errors))
			}
		}
		doc.Results = append(doc.Results, res...)
	}
	b.prog.stop()

	if o.jsonPath != "" {
		data, err := json.MarshalIndent(doc, "", " ")
		if err != nil {
			return err
		}
		data = append(data, '\n')
		if o.jsonPath == "-" {
			if _, err := stdout.Write(data); err != nil {
				return err
			}
		} else if err := os.WriteFile(o.jsonPath, data, 0o644); err != nil {
			return err
		}
	}
	if o.jsonPath != "-" {
		fmt.Fprintf(stdout, "mcbench: client go (%s), engine %s, master %q (%s)\n", runtime.Version(), doc.Engine,
			o.cfg.MasterServerAddress, o.source)
		writeTable(stdout, doc.Results)
	}
	if len(doc.Failures) > 0 {
		return fmt.Errorf("%d cases had failed keys: %s", len(doc.Failures), strings.Join(doc.Failures, "; "))
	}
	return nil
}

// view is the store the cases use: st itself, or with -own-segment a view
// that puts every object in st's own segment.
func (o *options) view(st *mooncake.Store) (*mooncake.Store, error) {
	if !o.ownSeg {
		return st, nil
	}
	host, err := st.Hostname()
	if err != nil {
		return nil, err
	}
	return st.WithReplicateConfig(mooncake.ReplicateConfig{PreferredSegments: []string{host}}), nil
}

func (o *options) paramsJSON() map[string]any {
	p := o.params
	return map[string]any{
		"scenarios": p.Scenarios, "apis": p.APIs, "sizes": p.Sizes, "batches": p.Batches,
		"max_batch_bytes": p.MaxBatchBytes, "dataset_bytes": p.DatasetBytes, "max_objects": p.MaxObjects,
		"mla_page_sizes": p.MLAPageSizes, "mha_page_sizes": p.MHAPageSizes, "hicache_pages": p.HiCachePages,
		"multi_shapes": p.MultiShapes, "callers": p.Callers, "prefix_pages": p.PrefixPages, "prefix_page_size": p.PrefixPageSize,
		"combining": p.Combining, "duration_s": o.duration.Seconds(), "warmup_s": o.warmup.Seconds(),
		"gen_bytes": o.genBytes, "rwmixread": o.rwmixread, "seed": o.seed,
		"segment": uint64(o.cfg.GlobalSegmentSize), "local_buffer": uint64(o.cfg.LocalBufferSize),
		"protocol": o.cfg.Protocol, "master": o.cfg.MasterServerAddress, "batch_write_keys": o.cfg.BatchWriteKeys, "batch_write_bytes": o.cfg.BatchWriteBytes, "twins": o.twins,
		"thp": o.thp, "glibc_tunables": os.Getenv("GLIBC_TUNABLES"), "memcpy_ref": refCopyImpl,
	}
}

func hostInfo() map[string]any {
	h := map[string]any{"os": runtime.GOOS, "arch": runtime.GOARCH, "cpus": runtime.NumCPU()}
	if name, err := os.Hostname(); err == nil {
		h["hostname"] = name
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "model name") {
				if i := strings.IndexByte(line, ':'); i >= 0 {
					h["cpu"] = strings.TrimSpace(line[i+1:])
				}
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err == nil {
			h["mem_bytes"] = kb << 10
		}
	}
	return h
}
