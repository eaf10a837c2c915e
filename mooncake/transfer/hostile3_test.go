//go:build cgo

package transfer_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer/transfertest"
)

// TestEngineHostileThirdRound pins the engine's refusals of the third
// hostile round (issue 21): a registration past the end of its memory, an
// unregistration naming a region twice, an empty notification.
func TestEngineHostileThirdRound(t *testing.T) {
	env := transfertest.NewEnv(t)
	e := env.Open(t)
	m, err := hostmem.Alloc(1<<20, hostmem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Free() })
	a := m.Addr()
	if runtime.GOOS == "linux" {
		gone, err := hostmem.Alloc(1<<20, hostmem.Options{})
		if err != nil {
			t.Fatal(err)
		}
		g := gone.Addr()
		if err := gone.Free(); err != nil {
			t.Fatal(err)
		}
		for name, err := range map[string]error{
			"2^63 bytes over a 1 MiB mapping": e.RegisterBuffer(a, 1<<63),
			"memory unmapped, in a batch":     e.RegisterBuffers([]uintptr{a, g}, []uint64{4096, 4096}),
		} {
			if !errors.Is(err, transfer.ErrInvalidArgument) || !errors.Is(err, hostmem.ErrRange) {
				t.Errorf("%s: %v, want ErrInvalidArgument wrapping hostmem.ErrRange", name, err)
			}
		}
	}
	if err := e.RegisterBuffers([]uintptr{a, a + 8192}, []uint64{4096, 4096}); err != nil {
		t.Fatal(err)
	}
	if err := e.UnregisterBuffers([]uintptr{a, a}); !errors.Is(err, transfer.ErrInvalidArgument) {
		t.Errorf("one region twice: %v, want ErrInvalidArgument", err)
	}
	if err := e.UnregisterBuffers([]uintptr{a, a + 8192}); err != nil {
		t.Errorf("nothing of the refused call was unregistered, so this works: %v", err)
	}
	peer := env.Open(t)
	seg, err := e.OpenSegment(peer.SegmentName())
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Notify":     e.Notify(seg, transfer.Notification{}),
		"NotifyPeer": e.NotifyPeer(peer.SegmentName(), transfer.Notification{}),
	} {
		if !errors.Is(err, transfer.ErrInvalidArgument) {
			t.Errorf("%s of an empty notification: %v, want ErrInvalidArgument", name, err)
		}
	}
}

// TestNotifyInboxBound: a peer's unread notifications are bounded (the
// embedded engine: 64 MiB); past the bound a send fails with ErrMemory,
// and reading the inbox makes room again.
func TestNotifyInboxBound(t *testing.T) {
	env := transfertest.NewEnv(t)
	if env.Native {
		t.Skip("upstream's engine keeps every unread notification (NotifyMaxBytes says so)")
	}
	a, b := env.Open(t), env.Open(t)
	big := transfer.Notification{Name: "n", Message: string(make([]byte, transfer.NotifyMaxBytes-1))}
	sent := 0
	var err error
	for ; sent < 1024; sent++ {
		if err = a.NotifyPeer(b.SegmentName(), big); err != nil {
			break
		}
	}
	if !errors.Is(err, transfer.ErrMemory) || sent != 512 {
		t.Fatalf("after %d notifications of 128 KiB: %v; want ErrMemory after 512 (64 MiB)", sent, err)
	}
	got, err := b.Notifications(nil)
	if err != nil || len(got) != 512 {
		t.Fatalf("read %d: %v", len(got), err)
	}
	if err := a.NotifyPeer(b.SegmentName(), big); err != nil {
		t.Errorf("after the inbox was read: %v", err)
	}
}
