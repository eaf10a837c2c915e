//go:build cgo

package transfer_test

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer/transfertest"
)

// TestUnregisterBufferEndsMemoryRegistration: the address-level calls and
// RegisterMemory keep one count, so memory unregistered either way can be
// registered again and freed after Close (before, the count stayed and
// Free was refused for the life of the process).
func TestUnregisterBufferEndsMemoryRegistration(t *testing.T) {
	env := transfertest.NewEnv(t)
	for name, unregister := range map[string]func(*transfer.Engine, *hostmem.Memory) error{
		"UnregisterBuffer":  func(e *transfer.Engine, m *hostmem.Memory) error { return e.UnregisterBuffer(m.Addr()) },
		"UnregisterBuffers": func(e *transfer.Engine, m *hostmem.Memory) error { return e.UnregisterBuffers([]uintptr{m.Addr()}) },
		"UnregisterMemory":  func(e *transfer.Engine, m *hostmem.Memory) error { return e.UnregisterMemory(m) },
	} {
		t.Run(name, func(t *testing.T) {
			e := env.Open(t)
			m, err := hostmem.Alloc(1<<20, hostmem.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.RegisterMemory(m); err != nil {
				t.Fatal(err)
			}
			if err := unregister(e, m); err != nil {
				t.Fatal(err)
			}
			if n := m.Registrations(); n != 0 {
				t.Errorf("after %s: %d registrations, want 0", name, n)
			}
			if err := e.RegisterMemory(m); err != nil {
				t.Fatalf("registering again: %v", err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if err := m.Free(); err != nil {
				t.Errorf("Free after Close: %v", err)
			}
		})
	}
}
