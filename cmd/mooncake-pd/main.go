// Command mooncake-pd shows prefill/decode disaggregation with the transfer
// engine: a prefill engine writes layer-first KV pages of a DeepSeek-V3
// shaped MLA host pool straight into a decode engine's pool of the same
// layout, in one batch with one notification at the end, and the decode
// side checks every byte.
//
// Before that push it compares two ways of sending the same pages:
// coalesced (hostcache.Peer merges runs of consecutive rows: 61 requests
// for 128 pages) and one request per page buffer (7,808). Each way is
// pushed once untimed, so that neither pays for first use (the peer's
// metadata, connections where the transport keeps them, cold caches), then
// -rounds times, alternating which way goes first; it prints each way's
// median and range and the ratio of the medians.
//
//	mooncake-pd                       both engines in this process (the default build: embedded)
//	mooncake-pd -processes 2          the decode side in a child process (native build: over TCP)
//
// With the native build, -metadata names the metadata service (the
// master's HTTP metadata server, or P2PHANDSHAKE), and MC_TCP_BIND_ADDRESS
// should be 127.0.0.1 on a test machine.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/connect"
	"github.com/mooncake-go/mooncake-go/internal/fill"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

type options struct {
	metadata  string
	host      string
	protocol  string
	pages     int
	pageSize  int
	layers    int
	processes int
	rounds    int
	role      string
	seed      uint64
	timeout   time.Duration
}

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("mooncake-pd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	meta := os.Getenv("MCGO_TEST_METADATA")
	if meta == "" {
		meta = "P2PHANDSHAKE"
	}
	fs.StringVar(&o.metadata, "metadata", meta, "metadata service of both engines (http://.../metadata or P2PHANDSHAKE; default $MCGO_TEST_METADATA)")
	fs.StringVar(&o.host, "host", "127.0.0.1", "host the engines advertise")
	fs.StringVar(&o.protocol, "protocol", "tcp", "transport: tcp or rdma")
	fs.IntVar(&o.pages, "pages", 128, "pages to push")
	fs.IntVar(&o.pageSize, "page-size", 1, "tokens per page")
	fs.IntVar(&o.layers, "layers", 61, "layers of the MLA pool (DeepSeek-V3: 61; 576 bf16 latent per token and layer)")
	fs.IntVar(&o.processes, "processes", 1, "1: both engines here; 2: the decode side in a child process")
	fs.IntVar(&o.rounds, "rounds", 5, "timed rounds of each way of pushing (after one untimed push of each)")
	fs.StringVar(&o.role, "role", "", "internal: decode, for the child of -processes 2")
	fs.Uint64Var(&o.seed, "seed", uint64(time.Now().UnixNano()), "seed of the page contents")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case o.pages <= 0 || o.pages > 1<<16:
		return nil, fmt.Errorf("-pages %d: want 1..65536", o.pages)
	case o.pageSize <= 0:
		return nil, fmt.Errorf("-page-size %d: want a positive number of tokens", o.pageSize)
	case o.layers <= 0:
		return nil, fmt.Errorf("-layers %d: want a positive count", o.layers)
	}
	if o.rounds <= 0 {
		return nil, fmt.Errorf("-rounds %d: want a positive count", o.rounds)
	}
	if o.processes != 1 && o.processes != 2 {
		return nil, errors.New("-processes is 1 or 2")
	}
	if o.host == "" || strings.ContainsAny(o.host, ":/ \x00") {
		return nil, fmt.Errorf("-host %q: want a host name or address (no port)", o.host)
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("-timeout %v: want a positive duration", o.timeout)
	}
	if o.role != "" && o.role != "decode" {
		return nil, fmt.Errorf("-role %q: the only role is decode (the child of -processes 2)", o.role)
	}
	if o.protocol != "tcp" && o.protocol != "rdma" {
		return nil, fmt.Errorf("-protocol %q: want tcp or rdma", o.protocol)
	}
	if o.processes == 2 && mooncake.Backend().Name != "native" {
		return nil, errors.New("-processes 2 needs the native build (-tags mooncake_native): the embedded engine's engines meet only inside one process")
	}
	return o, nil
}

func main() {
	o, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		defer cancel()
		if o.role == "decode" {
			err = decodeChild(ctx, o, os.Stdin, os.Stdout)
		} else {
			err = run(ctx, o, os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mooncake-pd:", err)
		os.Exit(1)
	}
}

// pool makes the MLA host pool both sides use: 128 pages plus room, so the
// decode side receives them at other rows than they leave from.
func (o *options) pool() (*hostcache.HostPool, error) {
	return hostcache.NewMLAPool(hostcache.MLAConfig{
		Layers: o.layers, LatentDim: 576, DType: hostcache.BF16, PageSize: o.pageSize,
		Tokens: 3 * o.pages * o.pageSize, Layout: hostcache.LayerFirst,
		// Populated, so the push does not time first-touch page faults.
		Allocator: &hostcache.MmapAllocator{Options: hostmem.Options{Populate: true}},
	})
}

// rows: the prefill side sends rows 0..n-1, the decode side receives them
// at rows n+1..2n (both runs consecutive, as a page allocator hands out).
func (o *options) rows() (send, recv []int64) {
	for i := 0; i < o.pages; i++ {
		for t := 0; t < o.pageSize; t++ {
			send = append(send, int64(i*o.pageSize+t))
			recv = append(recv, int64((o.pages+1+i)*o.pageSize+t))
		}
	}
	return send, recv
}

// side is one engine with its pool registered.
type side struct {
	e    *transfer.Engine
	pool *hostcache.HostPool
}

func (o *options) open(name string) (*side, error) {
	e, err := transfer.Open(transfer.Config{MetadataServer: o.metadata, LocalServerName: name, Protocol: o.protocol})
	if err != nil {
		return nil, err
	}
	p, err := o.pool()
	if err != nil {
		e.Close()
		return nil, err
	}
	for _, b := range hostcache.IterHostPoolBuffers(p) {
		if err := e.RegisterBuffer(b.Addr, b.Size); err != nil {
			e.Close()
			p.Close()
			return nil, err
		}
	}
	return &side{e: e, pool: p}, nil
}

func (s *side) close() {
	_ = s.e.Close()
	_ = s.pool.Close()
}

func (o *options) engineName() string {
	if o.metadata == "P2PHANDSHAKE" {
		return o.host
	}
	return fmt.Sprintf("%s:%d", o.host, 20000+os.Getpid()%20000)
}

// announce is what the decode side tells the prefill side.
type announce struct {
	Segment     string `json:"segment"`
	Fingerprint string `json:"fingerprint"`
}

func run(ctx context.Context, o *options, out io.Writer) error {
	fmt.Fprintf(out, "mooncake-pd: backend %s, metadata %s, %d processes, %d layer-first pages x %d layers x %d B\n",
		mooncake.Backend().Name, o.metadata, o.processes, o.pages, o.layers, o.pageSize*1152)
	var decode *side
	var ann announce
	var child *exec.Cmd
	var childOut *bufio.Scanner
	var childIn io.WriteCloser
	if o.processes == 1 {
		var err error
		if decode, err = o.open(o.engineName()); err != nil {
			return fmt.Errorf("decode engine: %w", err)
		}
		defer decode.close()
		ann = announce{Segment: decode.e.SegmentName(), Fingerprint: decode.pool.Fingerprint()}
	} else {
		var err error
		child, childIn, childOut, err = startChild(o)
		if err != nil {
			return err
		}
		defer func() {
			_ = childIn.Close()
			_ = child.Wait() // the child exits when its input closes
		}()
		if !childOut.Scan() {
			return fmt.Errorf("decode process: no announcement: %v", childOut.Err())
		}
		if err := json.Unmarshal(childOut.Bytes(), &ann); err != nil {
			return fmt.Errorf("decode process said %q: %w", childOut.Text(), err)
		}
		fmt.Fprintf(out, "decode process %d: segment %s\n", child.Process.Pid, ann.Segment)
	}

	prefill, err := o.open(o.host + pfSuffix(o))
	if err != nil {
		return fmt.Errorf("prefill engine: %w", err)
	}
	defer prefill.close()
	seg, err := prefill.e.OpenSegment(ann.Segment)
	if err != nil {
		return err
	}
	bufs, err := seg.Buffers(nil)
	if err != nil {
		return err
	}
	remote := make([]hostcache.RemoteBuffer, len(bufs))
	for i, b := range bufs {
		remote[i] = hostcache.RemoteBuffer{Addr: b.Addr, Size: b.Size}
	}
	remote, err = hostcache.MatchPoolBuffers(prefill.pool, remote)
	if err != nil {
		return err
	}
	peer, err := hostcache.NewPeer(prefill.pool, ann.Fingerprint, remote)
	if err != nil {
		return err
	}
	send, recv := o.rows()
	fillPages(prefill.pool, send, o.seed)

	t0 := time.Now()
	copies, err := peer.AppendPush(nil, send, recv)
	if err != nil {
		return err
	}
	plan := time.Since(t0)
	// The same pages, one request per page buffer: what coalescing saves.
	per, err := peer.AppendPushPerBuffer(nil, send, recv)
	if err != nil {
		return err
	}
	ways := []*way{
		{name: "coalesced", reqs: connect.AppendRequests(nil, seg.Handle(), copies)},
		{name: "one per buffer", reqs: connect.AppendRequests(nil, seg.Handle(), per)},
	}
	total := uint64(o.pages) * uint64(o.layers) * uint64(o.pageSize) * 1152
	fmt.Fprintf(out, "plan: %d pages, %.1f MiB: %d requests coalesced (planned in %v), %d one per buffer\n",
		o.pages, float64(total)/(1<<20), len(ways[0].reqs), plan.Round(time.Microsecond), len(ways[1].reqs))
	fmt.Fprintf(out, "warm-up: each way pushed once, untimed; then %d timed rounds, alternating which goes first\n", o.rounds)
	if err := compare(ctx, prefill.e, ways, o.rounds); err != nil {
		return err
	}
	for _, w := range ways {
		med, lo, hi := w.median(), w.times[0], w.times[len(w.times)-1]
		fmt.Fprintf(out, "  %-15s %5d requests: median %-9s %s  (runs %s–%s)\n",
			w.name, len(w.reqs), ms(med), gbps(float64(total)/med.Seconds()), ms(lo), ms(hi))
	}
	ratios := roundRatios(ways)
	fmt.Fprintf(out, "coalesced: %.1fx (ratio of the medians; per round %.1fx–%.1fx)\n",
		ways[1].median().Seconds()/ways[0].median().Seconds(), ratios[0], ratios[len(ratios)-1])

	// The push the decode side waits for: coalesced, with one notification.
	msg := fmt.Sprintf("%d %d", o.pages, o.seed)
	t1 := time.Now()
	sum, err := prefill.e.TransferNotify(ctx, ways[0].reqs, transfer.Notification{Name: "pages", Message: msg})
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	fmt.Fprintf(out, "push: %d pages in %d requests, %.1f MiB in %s, notification %s\n",
		o.pages, len(ways[0].reqs), float64(sum.Bytes)/(1<<20), ms(time.Since(t1)), notifyWord(sum.Notify))

	// The decode side checks the pages it received.
	var verdict string
	if o.processes == 1 {
		verdict, err = awaitAndVerify(ctx, decode, o)
	} else {
		_ = childIn.Close()
		if !childOut.Scan() {
			err = fmt.Errorf("decode process: no verdict: %v", childOut.Err())
		} else {
			verdict = childOut.Text()
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "decode:", verdict)
	if !strings.HasPrefix(verdict, "verified") {
		return errors.New("the decode side did not verify the pages")
	}
	return nil
}

// way is one way of pushing the pages, with its timed runs.
type way struct {
	name  string
	reqs  []transfer.Request
	times []time.Duration // in round order until compare sorts them
	order []time.Duration // in round order
}

func (w *way) median() time.Duration {
	n := len(w.times)
	if n%2 == 1 {
		return w.times[n/2]
	}
	return (w.times[n/2-1] + w.times[n/2]) / 2
}

// compare pushes each way once untimed (so that neither pays for first
// use: the peer's metadata, connections where the transport keeps them,
// cold caches), then rounds times, timing each push and alternating which
// way goes first; it leaves each way's times sorted.
func compare(ctx context.Context, e *transfer.Engine, ways []*way, rounds int) error {
	push := func(w *way) (time.Duration, error) {
		t := time.Now()
		if _, err := e.Transfer(ctx, w.reqs); err != nil {
			return 0, fmt.Errorf("push %s: %w", w.name, err)
		}
		return time.Since(t), nil
	}
	for _, w := range ways {
		if _, err := push(w); err != nil {
			return err
		}
	}
	for r := 0; r < rounds; r++ {
		for i := range ways {
			w := ways[(i+r)%len(ways)]
			d, err := push(w)
			if err != nil {
				return err
			}
			w.order = append(w.order, d)
		}
	}
	for _, w := range ways {
		w.times = append(w.times[:0], w.order...)
		slices.Sort(w.times)
	}
	return nil
}

// roundRatios is, round by round, the second way's time over the first's,
// sorted.
func roundRatios(ways []*way) []float64 {
	r := make([]float64, len(ways[0].order))
	for i := range r {
		r[i] = ways[1].order[i].Seconds() / ways[0].order[i].Seconds()
	}
	slices.Sort(r)
	return r
}

// gbps prints bytes per second as GB/s (10^9 bytes), with three decimals
// below 0.1 so that a slow push does not print as 0.00 or 0.01.
func gbps(bytesPerSec float64) string {
	if v := bytesPerSec / 1e9; v < 0.1 {
		return fmt.Sprintf("%6.3f GB/s", v)
	}
	return fmt.Sprintf("%6.2f GB/s", bytesPerSec/1e9)
}

// ms prints a duration in milliseconds with three significant digits.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func pfSuffix(o *options) string {
	if o.metadata == "P2PHANDSHAKE" {
		return ""
	}
	return fmt.Sprintf(":%d", 40000+os.Getpid()%20000)
}

func notifyWord(s transfer.NotifyState) string {
	switch s {
	case transfer.NotifySent:
		return "sent"
	case transfer.NotifyDropped:
		return "dropped"
	case transfer.NotifySendFailed:
		return "failed"
	}
	return "none"
}

// fillPages writes the pattern of seed and page number into each sent page.
func fillPages(p *hostcache.HostPool, rows []int64, seed uint64) {
	ps := p.PageSize()
	for i := 0; i*ps < len(rows); i++ {
		row := int(rows[i*ps]) / ps
		for _, b := range pageBuffers(p, row) {
			fill.Fill(b, seed+uint64(i))
		}
	}
}

// pageBuffers returns the bytes of one page, buffer by buffer.
func pageBuffers(p *hostcache.HostPool, row int) [][]byte {
	ps := p.PageSize()
	idx := make([]int64, ps)
	for t := range idx {
		idx[t] = int64(row*ps + t)
	}
	addrs, sizes, err := hostcache.PageBufferMeta(p, idx)
	if err != nil {
		panic(err) // rows come from options.rows, inside the pool
	}
	var out [][]byte
	for i, a := range addrs {
		for _, b := range hostcache.IterHostPoolBuffers(p) {
			if b.Contains(a, sizes[i]) {
				off := uint64(a - b.Addr)
				out = append(out, b.Mem[off:off+sizes[i]])
				break
			}
		}
	}
	return out
}

// awaitAndVerify waits for the prefill side's notification, then checks
// every received page against the pattern it names.
func awaitAndVerify(ctx context.Context, s *side, o *options) (string, error) {
	var got []transfer.Notification
	for len(got) == 0 {
		var err error
		if got, err = s.e.Notifications(got); err != nil {
			return "", err
		}
		if len(got) == 0 {
			select {
			case <-ctx.Done():
				return "", fmt.Errorf("no notification: %w", ctx.Err())
			case <-time.After(time.Millisecond):
			}
		}
	}
	var pages int
	var seed uint64
	if _, err := fmt.Sscanf(got[0].Message, "%d %d", &pages, &seed); err != nil || got[0].Name != "pages" {
		return "", fmt.Errorf("unexpected notification %+v", got[0])
	}
	_, recv := o.rows()
	ps := s.pool.PageSize()
	want := make([]byte, 0, 1<<20)
	var n int
	for i := 0; i < pages; i++ {
		row := int(recv[i*ps]) / ps
		for _, b := range pageBuffers(s.pool, row) {
			want = want[:len(b)]
			fill.Fill(want, seed+uint64(i))
			if string(want) != string(b) {
				return fmt.Sprintf("page %d differs", i), nil
			}
			n += len(b)
		}
	}
	return fmt.Sprintf("verified %d pages, %.1f MiB, every byte (notification %q: %q)", pages, float64(n)/(1<<20), got[0].Name, got[0].Message), nil
}

// childEnv marks the child process, so that a test binary re-executed as
// the child runs main (see TestMain).
const childEnv = "MOONCAKE_PD_CHILD"

// startChild starts this program as the decode side; it announces its
// segment on its first output line and its verdict on the second, after its
// input is closed.
func startChild(o *options) (*exec.Cmd, io.WriteCloser, *bufio.Scanner, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(self, "-role", "decode", "-metadata", o.metadata, "-host", o.host, "-protocol", o.protocol,
		"-pages", fmt.Sprint(o.pages), "-page-size", fmt.Sprint(o.pageSize), "-layers", fmt.Sprint(o.layers),
		"-timeout", o.timeout.String())
	cmd.Stderr = os.Stderr
	cmd.Env = append(os.Environ(), childEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, bufio.NewScanner(outPipe), nil
}

// decodeChild is the decode side in its own process.
func decodeChild(ctx context.Context, o *options, in io.Reader, out io.Writer) error {
	s, err := o.open(o.engineName())
	if err != nil {
		return err
	}
	defer s.close()
	line, _ := json.Marshal(announce{Segment: s.e.SegmentName(), Fingerprint: s.pool.Fingerprint()})
	fmt.Fprintf(out, "%s\n", line)
	_, _ = io.Copy(io.Discard, in) // the prefill side closes our input when its pushes are done
	verdict, err := awaitAndVerify(ctx, s, o)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, verdict)
	return nil
}
