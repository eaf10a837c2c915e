//go:build cgo

package transfer_test

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/cabi/ctransfer"
	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer/transfertest"
)

func TestConformance(t *testing.T) {
	t.Logf("backend %s", mooncake.Backend().Name)
	transfertest.RunConformance(t, transfertest.NewEnv)
}

// TestLayout: the Go types that cross into C as they are have the C
// structs' sizes and field offsets.
func TestLayout(t *testing.T) {
	c := ctransfer.Layout()
	if c == nil {
		t.Skip("built without cgo: no C structs to compare with")
	}
	var r transfer.Request
	var ts transfer.RequestStatus
	var s transfer.Summary
	for name, got := range map[string]uintptr{
		"request": unsafe.Sizeof(r), "request.opcode": unsafe.Offsetof(r.Dir), "request.segment": unsafe.Offsetof(r.Segment),
		"request.local": unsafe.Offsetof(r.Local), "request.remote": unsafe.Offsetof(r.Remote), "request.length": unsafe.Offsetof(r.Length),
		"task": unsafe.Sizeof(ts), "task.state": unsafe.Offsetof(ts.State), "task.bytes": unsafe.Offsetof(ts.Bytes),
		"summary": unsafe.Sizeof(s), "summary.state": unsafe.Offsetof(s.State), "summary.in_flight": unsafe.Offsetof(s.InFlight),
		"summary.tasks": unsafe.Offsetof(s.Tasks), "summary.bytes": unsafe.Offsetof(s.Bytes), "summary.notify": unsafe.Offsetof(s.Notify),
		"summary.notify_rc": unsafe.Offsetof(s.NotifyCode),
		"max_batch":         transfer.MaxBatch, "notify_max_bytes": transfer.NotifyMaxBytes,
	} {
		if want, ok := c[name]; !ok || want != got {
			t.Errorf("%s: Go %d, C %d", name, got, want)
		}
	}
}

func TestCodes(t *testing.T) {
	if transfer.ErrBatchBusy.String() != "ERR_BATCH_BUSY" || transfer.ErrInvalidHandle.String() != "ERR_INVALID_HANDLE" {
		t.Error("code names")
	}
	if transfer.ErrorCode(-4242).Known() || transfer.ErrorCode(-4242).String() != "ErrorCode(-4242)" {
		t.Error("unknown code")
	}
	if transfer.Read.String() != "read" || transfer.Write.String() != "write" || transfer.Direction(7).String() != "Direction(7)" {
		t.Error("direction names")
	}
	err := error(&transfer.Error{Op: transfer.OpSubmit, Peer: "p", Code: transfer.ErrBatchBusy})
	if !errors.Is(err, transfer.ErrBatchBusy) || errors.Is(err, transfer.ErrInvalidArgument) {
		t.Error("errors.Is")
	}
	if err.Error() != `transfer: submit_transfer "p": ERR_BATCH_BUSY (-4)` {
		t.Errorf("message %q", err.Error())
	}
}

// TestEmbeddedRules pins choices of the embedded engine where upstream
// differs or cannot be asked from one process.
func TestEmbeddedRules(t *testing.T) {
	if mooncake.Backend().Name != "embedded" {
		t.Skip("rules of the embedded engine")
	}
	env := transfertest.NewEnv(t)
	a := env.Open(t)
	_, err := transfer.Open(transfer.Config{MetadataServer: env.Metadata, LocalServerName: a.SegmentName()})
	if !errors.Is(err, transfer.ErrMetadata) {
		t.Errorf("a second live engine with the same name: %v, want ErrMetadata", err)
	}
	h1 := env.Open(t, func(c *transfer.Config) { c.MetadataServer, c.LocalServerName = "P2PHANDSHAKE", "127.0.0.1" })
	h2 := env.Open(t, func(c *transfer.Config) { c.MetadataServer, c.LocalServerName = "P2PHANDSHAKE", "127.0.0.1" })
	if h1.SegmentName() == h2.SegmentName() {
		t.Errorf("handshake engines share the name %q", h1.SegmentName())
	}
	if _, err := h1.OpenSegment(h2.SegmentName()); err != nil {
		t.Errorf("handshake engines meet by name: %v", err)
	}
	none := env.Open(t, func(c *transfer.Config) { c.Protocol = "none" })
	m := transfertest.Memory(t, none, 4096)
	seg, err := none.OpenSegment(none.SegmentName())
	if err != nil {
		t.Fatal(err)
	}
	_, err = none.Transfer(context.Background(), []transfer.Request{{Dir: transfer.Write, Segment: seg.Handle(), Local: m.Addr(), Remote: uint64(m.Addr()) + 2048, Length: 16}})
	if !errors.Is(err, transfer.ErrNotSupportedTransport) {
		t.Errorf("no transport: %v", err)
	}
}

// BenchmarkTransfer: one synchronous Transfer per op (batch alloc, submit,
// the polls of Wait, free); allocs/op is the point.
func BenchmarkTransfer(b *testing.B) {
	env := transfertest.NewEnv(b)
	x, y := env.Open(b), env.Open(b)
	mx, my := transfertest.Memory(b, x, 1<<20), transfertest.Memory(b, y, 1<<20)
	seg, err := x.OpenSegment(y.SegmentName())
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []uint64{4096, 64 << 10} {
		b.Run(byteName(size), func(b *testing.B) {
			reqs := []transfer.Request{{Dir: transfer.Write, Segment: seg.Handle(), Local: mx.Addr(), Remote: uint64(my.Addr()), Length: size}}
			ctx := context.Background()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := x.Transfer(ctx, reqs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLarge compares the engine with memcpy on the same bytes: each op
// moves 16 requests of 4 MiB in one batch (Transfer), or copies the same 16
// blocks with copy() (the runtime's memmove), cycling through 256 MiB on
// both sides so that neither runs from the cache. MB/s of the two is the
// issue's "80% of memcpy" target for the embedded engine.
func BenchmarkLarge(b *testing.B) {
	const block, n, region = 4 << 20, 16, 256 << 20
	env := transfertest.NewEnv(b)
	x, y := env.Open(b), env.Open(b)
	mx, my := transfertest.Memory(b, x, region), transfertest.Memory(b, y, region)
	src, dst := mx.Bytes(), my.Bytes()
	for i := range src {
		src[i] = byte(i)
	}
	clear(dst)
	seg, err := x.OpenSegment(y.SegmentName())
	if err != nil {
		b.Fatal(err)
	}
	rounds := region / (block * n)
	batches := make([][]transfer.Request, rounds)
	for r := range batches {
		for i := 0; i < n; i++ {
			off := uint64((r*n + i) * block)
			batches[r] = append(batches[r], transfer.Request{Dir: transfer.Write, Segment: seg.Handle(),
				Local: mx.Addr() + uintptr(off), Remote: uint64(my.Addr()) + off, Length: block})
		}
	}
	b.Run("engine-16x4MiB", func(b *testing.B) {
		ctx := context.Background()
		b.SetBytes(block * n)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := x.Transfer(ctx, batches[i%rounds]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memcpy-16x4MiB", func(b *testing.B) {
		b.SetBytes(block * n)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r := i % rounds
			for j := 0; j < n; j++ {
				off := (r*n + j) * block
				copy(dst[off:off+block], src[off:off+block])
			}
		}
	})
}

func byteName(n uint64) string {
	if n >= 1<<10 {
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n uint64) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
