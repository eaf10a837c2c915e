package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// teOptions are upstream transfer_engine_bench's flags, with its names and
// meaning, so that both tools run from one set of parameters.
type teOptions struct {
	mode, operation, protocol   string
	metadata, localName, target string
	bufferSize                  uint64
	batchSize, threads          int
	blockSize                   uint64
	duration                    time.Duration
	thp, combining              bool
}

func parseTE(args []string, stderr io.Writer) (*teOptions, error) {
	fs := flag.NewFlagSet("mcbench te", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &teOptions{}
	fs.StringVar(&o.mode, "mode", "initiator", "initiator or target")
	fs.StringVar(&o.operation, "operation", "read", "read or write")
	fs.StringVar(&o.protocol, "protocol", "tcp", "tcp or rdma")
	fs.StringVar(&o.metadata, "metadata_server", os.Getenv("MCGO_TEST_METADATA"), "metadata service (default $MCGO_TEST_METADATA)")
	fs.StringVar(&o.localName, "local_server_name", "127.0.0.1:17801", "this engine's segment name")
	fs.StringVar(&o.target, "segment_id", "127.0.0.1:17800", "the target's segment name (initiator)")
	fs.Uint64Var(&o.bufferSize, "buffer_size", 1<<30, "registered buffer (raised to block_size*batch_size*threads)")
	fs.IntVar(&o.batchSize, "batch_size", 128, "requests per batch")
	fs.Uint64Var(&o.blockSize, "block_size", 65536, "bytes per request")
	fs.IntVar(&o.threads, "threads", 1, "initiator goroutines, each with its own batches")
	seconds := fs.Int("duration", 10, "seconds the initiator runs")
	fs.BoolVar(&o.thp, "thp", false, "map the buffer with transparent huge pages")
	fs.BoolVar(&o.combining, "combining", false, "combine the goroutines' overlapping transfers into one batch (transfer.Config.Combining; docs/combining.md)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.duration = time.Duration(*seconds) * time.Second
	switch {
	case o.mode != "initiator" && o.mode != "target":
		return nil, fmt.Errorf("-mode %q: initiator or target", o.mode)
	case o.operation != "read" && o.operation != "write":
		return nil, fmt.Errorf("-operation %q: read or write", o.operation)
	case o.batchSize <= 0 || o.batchSize > transfer.MaxBatch || o.threads <= 0 || o.blockSize == 0 || *seconds <= 0:
		return nil, errors.New("batch_size, threads, block_size and duration must be positive")
	case o.metadata == "":
		return nil, errors.New("-metadata_server is required (or $MCGO_TEST_METADATA)")
	}
	// The buffer holds every thread's batch: refuse what does not fit in a
	// process (or wraps around 64 bits) rather than register a wrapped size.
	hi, need := bits.Mul64(o.blockSize, uint64(o.batchSize)*uint64(o.threads))
	if hi != 0 || need > maxTEBuffer {
		return nil, fmt.Errorf("-block_size %d x -batch_size %d x -threads %d: more than %d bytes of buffer", o.blockSize, o.batchSize, o.threads, uint64(maxTEBuffer))
	}
	if o.bufferSize > maxTEBuffer {
		return nil, fmt.Errorf("-buffer_size %d: more than %d bytes", o.bufferSize, uint64(maxTEBuffer))
	}
	if o.bufferSize < need {
		o.bufferSize = need
	}
	return o, nil
}

// maxTEBuffer bounds mcbench te's registered buffer (1 TiB).
const maxTEBuffer = 1 << 40

// runTE is `mcbench te`: upstream's transfer_engine_bench through this
// binding. The target registers a buffer and serves until SIGTERM or the
// end of its input; the initiator opens the target's segment, and each of
// its goroutines submits batches of batch_size requests of block_size
// bytes and waits for them, for -duration. It prints upstream's summary
// line, then the per-batch latency quantiles.
func runTE(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parseTE(args, stderr)
	if err != nil {
		return err
	}
	cfg := transfer.Config{MetadataServer: o.metadata, LocalServerName: o.localName, Protocol: o.protocol}
	if o.combining {
		cfg.Combining = transfer.CombiningOn
	}
	e, err := transfer.Open(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	mem, err := hostmem.Alloc(o.bufferSize, hostmem.Options{Populate: true, TransparentHugePages: o.thp})
	if err != nil {
		return err
	}
	defer mem.Free()
	if err := e.RegisterMemory(mem); err != nil {
		return err
	}
	defer e.UnregisterMemory(mem)
	if o.mode == "target" {
		fmt.Fprintf(stdout, "target %s ready: %d bytes at %#x\n", e.SegmentName(), mem.Size(), mem.Addr())
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		eof := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, stdin); close(eof) }()
		select {
		case <-sig:
		case <-eof:
		}
		return nil
	}
	seg, err := e.OpenSegment(o.target)
	if err != nil {
		return err
	}
	bufs, err := seg.Buffers(nil)
	if err != nil {
		return err
	}
	if len(bufs) == 0 {
		return fmt.Errorf("segment %s has no registered buffer", o.target)
	}
	remote := bufs[0]
	need := o.blockSize * uint64(o.batchSize) * uint64(o.threads)
	if remote.Size < need {
		return fmt.Errorf("the target's buffer (%d bytes) is smaller than block*batch*threads (%d)", remote.Size, need)
	}
	op := transfer.Read
	if o.operation == "write" {
		op = transfer.Write
	}
	var (
		mu      sync.Mutex
		lat     []time.Duration
		batches int
		failed  error
	)
	ctx := context.Background()
	start := time.Now()
	deadline := start.Add(o.duration)
	var wg sync.WaitGroup
	for tid := 0; tid < o.threads; tid++ {
		wg.Add(1)
		go func(tid int) {
			defer wg.Done()
			reqs := make([]transfer.Request, o.batchSize)
			for i := range reqs {
				// upstream's layout: entry i of thread tid at block*(i*threads+tid)
				off := o.blockSize * uint64(i*o.threads+tid)
				reqs[i] = transfer.Request{Dir: op, Segment: seg.Handle(), Local: mem.Addr() + uintptr(off), Remote: remote.Addr + off, Length: o.blockSize}
			}
			mine := make([]time.Duration, 0, 1<<16)
			n := 0
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if _, err := e.Transfer(ctx, reqs); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(t0))
				n++
			}
			mu.Lock()
			lat = append(lat, mine...)
			batches += n
			mu.Unlock()
		}(tid)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failed != nil {
		return failed
	}
	gb := float64(batches) * float64(o.batchSize) * float64(o.blockSize) / elapsed.Seconds() / 1e9
	// upstream's line, so one parser reads both tools
	fmt.Fprintf(stdout, "Test completed: duration %.2f, batch count %d, throughput %.2f GB/s\n", elapsed.Seconds(), batches, gb)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Fprintf(stdout, "batch latency: p50 %v p99 %v (%d batches, %.0f MB/s)\n", q(0.50).Round(time.Microsecond), q(0.99).Round(time.Microsecond),
		len(lat), gb*1000)
	if s := e.CombiningStats(); s.Batches > 0 {
		fmt.Fprintf(stdout, "combined: %d calls in %d batches (%.1f per batch)\n", s.Combined, s.Batches, float64(s.Combined)/float64(s.Batches))
	}
	return nil
}
