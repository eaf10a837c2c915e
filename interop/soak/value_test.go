package soak

import (
	"errors"
	"slices"
	"testing"
)

func TestValue(t *testing.T) {
	good := make([]byte, 1000)
	Fill(good, "k/1", 7)
	if v, err := Check(good, "k/1"); err != nil || v != 7 {
		t.Fatalf("Check of a good value: %d, %v", v, err)
	}
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	other := make([]byte, 1000)
	Fill(other, "k/1", 8)
	for _, tc := range []struct {
		name string
		b    []byte
		key  string
		want error
	}{
		{"another key's value", good, "k/2", ErrOtherKey},
		{"truncated", good[:999], "k/1", ErrSize},
		{"header only", good[:HeaderSize], "k/1", ErrSize},
		{"shorter than a header", good[:3], "k/1", ErrShort},
		{"zeros", make([]byte, 1000), "k/1", ErrMagic},
		{"one byte flipped", mod(func(b []byte) []byte { b[999] ^= 1; return b }), "k/1", ErrBody},
		{"version of another body", mod(func(b []byte) []byte { copy(b[HeaderSize:], other[HeaderSize:]); return b }), "k/1", ErrBody},
		{"two values glued", append(append([]byte(nil), good[:500]...), other[500:]...), "k/1", ErrBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Check(tc.b, tc.key); !errors.Is(err, tc.want) {
				t.Errorf("Check: %v, want %v", err, tc.want)
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	v := make([]byte, 100)
	Fill(v, "a", 1)
	f.Add(v, "a")
	f.Add([]byte("MCSK"), "")
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		ver, err := Check(b, key)
		if err != nil {
			return
		}
		// A value that passes is exactly the one Fill writes.
		w := make([]byte, len(b))
		Fill(w, key, ver)
		if string(w) != string(b) {
			t.Fatalf("Check passed %x for %q, Fill writes %x", b, key, w)
		}
	})
}

func TestModel(t *testing.T) {
	var e entry
	if v, ok := e.certain(); !ok || v != 0 || e.next() != 1 {
		t.Fatalf("new entry: %d %v next %d", v, ok, e.next())
	}
	e.acked(1)
	e.failed(2) // holds 1 or 2
	if _, ok := e.certain(); ok {
		t.Fatal("certain after a failed write")
	}
	if e.next() != 3 {
		t.Fatalf("next %d, want 3", e.next())
	}
	if c := e; c.verdict(3) != lost {
		t.Error("version 3 accepted; it was never written")
	} else if c.verdict(3) != held || c.verdict(0) != lost {
		t.Error("a lost write is not counted once: what was read did not become certain")
	}
	if e.verdict(2) != held {
		t.Error("version 2 refused")
	}
	if v, ok := e.certain(); !ok || v != 2 {
		t.Errorf("after reading 2: %d %v", v, ok)
	}
	e.failed(0) // a failed remove: 2 or absent
	if e.verdict(0) != held {
		t.Error("absent refused after a failed remove")
	}
	e.acked(3)
	e.failedUpsert(4) // 3, 4, or erased by the upsert's UpsertStart
	if got := e.possible(); !slices.Equal(got, []uint32{3, 4, 0}) {
		t.Errorf("after a failed upsert: %v, want [3 4 0]", got)
	}
	if e.verdict(0) != erased {
		t.Error("absent after a failed upsert: not counted as erased")
	}
	if e.verdict(0) != held {
		t.Error("absent once learned: not held")
	}
	e.failedUpsert(5) // absent already possible: not twice
	if got := e.possible(); !slices.Equal(got, []uint32{0, 5}) {
		t.Errorf("after a second failed upsert: %v, want [0 5]", got)
	}
	for i := uint32(1); i <= 6; i++ {
		e.failed(i)
	}
	if got := len(e.possible()); got != 4 {
		t.Errorf("%d possibilities kept, want 4", got)
	}
	// Inside a failover's window a read that matches nothing is a rollback
	// and nothing becomes certain; after it, a key last certain before it
	// may read as an earlier state once; a write acknowledged after it may
	// not.
	e.acked(7)
	var f entry
	f.acked(3)
	NoteFailover() // the window opens
	if e.verdict(5) != rolledBack {
		t.Error("an earlier version inside a failover's window is not a rollback")
	}
	if e.verdict(7) != held {
		t.Error("the acknowledged version refused inside the window")
	}
	if _, ok := e.certain(); ok {
		t.Error("a version became certain inside the window")
	}
	NoteFailover() // the window closes
	if e.verdict(5) != held {
		t.Error("a version read inside the window refused after it")
	}
	if f.verdict(2) != rolledBack {
		t.Error("an earlier version of a key last certain before the window is not a rollback")
	}
	if v, ok := f.certain(); !ok || v != 2 {
		t.Errorf("after the rollback: %d %v, want 2", v, ok)
	}
	e.acked(8)
	if e.verdict(0) != lost {
		t.Error("a write acknowledged after the window read back missing is not lost")
	}
	// A put after a remove read back missing: dropped only where upstream
	// may drop it (PutAfterRemoveMayDrop), and only as "not found".
	for _, mayDrop := range []bool{false, true} {
		PutAfterRemoveMayDrop = mayDrop
		var p entry
		p.ackedRemove()
		p.ackedPut(1)
		want := map[bool]outcome{false: lost, true: dropped}[mayDrop]
		if got := p.verdict(0); got != want {
			t.Errorf("PutAfterRemoveMayDrop %v: a put after a remove read missing: %v, want %v", mayDrop, got, want)
		}
		// A second remove refused (REPLICA_IS_NOT_READY: the first is not
		// durable yet), then an upsert: dropped alike.
		p.ackedRemove()
		p.failed(0)
		if _, ok := p.certain(); !ok {
			t.Error("a failed remove of an absent key made it uncertain")
		}
		p.ackedUpsert(1)
		if got := p.verdict(0); got != want {
			t.Errorf("PutAfterRemoveMayDrop %v: an upsert after a refused remove after a remove read missing: %v, want %v", mayDrop, got, want)
		}
		p.ackedRemove()
		p.ackedPut(2)
		p.ackedUpsert(3)
		if got := p.verdict(0); got != want {
			t.Errorf("PutAfterRemoveMayDrop %v: an upsert after a put after a remove read missing: %v, want %v", mayDrop, got, want)
		}
		p.ackedUpsert(4) // found absent, the remove maybe still not durable
		if got := p.verdict(0); got != want {
			t.Errorf("PutAfterRemoveMayDrop %v: an upsert after a dropped put read missing: %v, want %v", mayDrop, got, want)
		}
		p.ackedUpsert(5)
		if p.verdict(5) != held {
			t.Error("an upsert read back refused")
		}
		p.ackedUpsert(6) // a value was read since the remove: certain
		if got := p.verdict(0); got != lost {
			t.Errorf("PutAfterRemoveMayDrop %v: an upsert after a value was read, read missing: %v, want lost", mayDrop, got)
		}
		p.ackedRemove()
		p.ackedPut(2)
		if got := p.verdict(3); got != lost {
			t.Errorf("PutAfterRemoveMayDrop %v: a put after a remove read as another version: %v, want lost", mayDrop, got)
		}
	}
	PutAfterRemoveMayDrop = false
}
