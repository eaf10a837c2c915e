package soak

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// failovers counts the notes of master failovers this process has had
// (NoteFailover), two per failover: its window opens when the leader is
// killed and closes when the soak judges the clients settled at the new
// leader (failoverSettle after the first client's put and get there).
// At the pinned commit a failover may roll back what was acknowledged
// before its window closed: the leader acknowledges before the oplog entry
// is durable in etcd and drops the entry when its queue is full, and writes
// the new leader acknowledged before a client remounted were lost too
// (docs/ha.md). Within the window reads may flip between states.
var failovers atomic.Uint32

// NoteFailover opens a failover's window (a leader is being killed) or
// closes it (the clients have settled at the new leader).
func NoteFailover() { failovers.Add(1) }

// inWindow reports whether a failover's window is open.
func inWindow() bool { return failovers.Load()%2 == 1 }

// PutAfterRemoveMayDrop is set on an HA master with the oplog: there, at
// the pinned commit, Remove keeps the object's metadata until the remove's
// oplog entry is durable, a Put of the key meanwhile gets
// OBJECT_ALREADY_EXISTS from the master, and upstream's client reports that
// as success (docs/ha.md). Such a put may have stored nothing, and so may
// the upserts after it until a read finds a value.
var PutAfterRemoveMayDrop bool

// entry is what a writer knows of one of its keys: the versions it may
// hold (0: absent). One version when the last write or remove was
// acknowledged; each one that failed since adds the version it tried.
type entry struct {
	vers  [4]uint32
	n     int       // 0 means {0}: never written
	epoch uint32    // failovers when it was last certain
	at    time.Time // when it was last certain, for the notes
	// removed: a remove was acknowledged and no read has found a value
	// since (PutAfterRemoveMayDrop); mayBeDropped: the certain version was
	// written then, and may go when the remove becomes durable.
	removed, mayBeDropped bool
	// erasable: absent is possible only because an upsert failed since the
	// key was last certain (failedUpsert).
	erasable bool
}

func (e *entry) possible() []uint32 {
	if e.n == 0 {
		return []uint32{0}
	}
	return e.vers[:e.n]
}

// certain is the one version the key holds, if known.
func (e *entry) certain() (uint32, bool) {
	p := e.possible()
	return p[0], len(p) == 1
}

// next is a version newer than any it may hold.
func (e *entry) next() uint32 {
	var m uint32
	for _, v := range e.possible() {
		m = max(m, v)
	}
	return m + 1
}

// acked records that the key certainly holds ver (0: absent), as an
// acknowledged write or a read shows. Whether a remove is pending stays.
func (e *entry) acked(ver uint32) {
	*e = entry{vers: [4]uint32{ver}, n: 1, epoch: failovers.Load(), at: time.Now(), removed: e.removed}
}

// ackedRemove records an acknowledged remove.
func (e *entry) ackedRemove() {
	e.acked(0)
	e.removed = PutAfterRemoveMayDrop
}

// failed records a write of ver (0: a remove) that returned an error: the
// key may now hold ver too. Past four possibilities the oldest is dropped
// (a verdict may then call a read lost that was not; soaks have not come
// near).
func (e *entry) failed(ver uint32) {
	if e.n == 0 {
		e.vers[0], e.n, e.epoch = 0, 1, failovers.Load()
	}
	if slices.Contains(e.possible(), ver) {
		return
	}
	if e.n == len(e.vers) {
		copy(e.vers[:], e.vers[1:])
		e.n--
	}
	e.vers[e.n] = ver
	e.n++
}

// failedUpsert records an upsert of ver that returned an error. Besides
// what it held and ver, the key may now be absent: upstream's UpsertStart
// erases the metadata of an object whose size changes before it allocates
// the new size, and an allocation that fails (NO_AVAILABLE_HANDLE) leaves
// the key erased (docs/soak.md, "A failed upsert can erase the key").
func (e *entry) failedUpsert(ver uint32) {
	e.failed(ver)
	if !slices.Contains(e.possible(), 0) {
		e.failed(0)
		e.erasable = true
	}
}

// ackedPut records an acknowledged Put (write-once) of ver, and
// ackedUpsert an Upsert: a write after an acknowledged remove, with no
// value read since, may be dropped when the remove becomes durable (the
// removed object's metadata it lands on is erased then; docs/ha.md).
func (e *entry) ackedPut(ver uint32) { e.ackedWrite(ver) }

func (e *entry) ackedUpsert(ver uint32) { e.ackedWrite(ver) }

func (e *entry) ackedWrite(ver uint32) {
	e.acked(ver)
	e.mayBeDropped = e.removed
}

// outcome is a read's verdict.
type outcome int

const (
	held       outcome = iota // one of the versions the key may hold
	rolledBack                // another, but a failover came after the key was last certain
	dropped                   // not found after a put that followed a remove (PutAfterRemoveMayDrop)
	erased                    // not found after a failed upsert (failedUpsert): held, counted apart
	lost                      // another: an acknowledged write is lost
)

// verdict compares what a read found (0: not found) with the model and
// makes it the certain version unless it is lost.
func (e *entry) verdict(found uint32) outcome {
	return e.judge(found != 0, found, true)
}

// existVerdict judges an existence check as verdict judges a read. It
// learns no version: only "absent" becomes certain.
func (e *entry) existVerdict(exists bool) outcome {
	return e.judge(exists, 0, false)
}

// judge is verdict (exact: found is the version read) and existVerdict
// (only whether the key exists). Inside a failover's window a read that
// matches nothing is a rollback and nothing becomes certain; after it, a
// key last certain before it may read as an earlier state once, which
// then becomes certain.
func (e *entry) judge(exists bool, found uint32, exact bool) outcome {
	match := func(v uint32) bool { return (exact && v == found) || (!exact && (v != 0) == exists) }
	learn := func() {
		if exact || !exists {
			e.acked(found)
		}
		if exists { // a value: no write of it was dropped
			e.removed = false
		}
	}
	window := inWindow()
	for _, v := range e.possible() {
		if match(v) {
			wasErased := v == 0 && e.erasable
			if !window {
				learn()
			}
			if wasErased {
				return erased
			}
			return held
		}
	}
	if !exists && e.mayBeDropped {
		// Absent, but the remove may still not be durable: the next
		// write may be dropped too (the soak saw a second put dropped).
		e.acked(0)
		return dropped
	}
	if window {
		if exact {
			e.failed(found) // it may hold what was read, too
		}
		return rolledBack
	}
	if e.n > 0 && e.epoch < failovers.Load() {
		learn()
		return rolledBack
	}
	// What was read becomes certain, so one lost write counts once and not
	// again at every later read of the key (one run counted 57,232 "lost"
	// reads of a handful of keys: docs/ha.md).
	learn()
	return lost
}

// Stats are one client's counters, in a form both the Go and the Python
// clients write as JSON.
type Stats struct {
	Ops           map[string]int64 `json:"ops"`            // calls by operation
	Keys          map[string]int64 `json:"keys"`           // keys carried, by operation
	BytesVerified int64            `json:"bytes_verified"` // bytes read and checked against their value
	Errors        map[string]int64 `json:"errors"`         // "op: CODE" -> count, per key for batches
	Corrupt       int64            `json:"corrupt"`        // reads whose bytes are no value of their key
	Lost          int64            `json:"lost"`           // acknowledged writes read back missing or as another version
	RolledBack    int64            `json:"rolled_back"`    // such reads of a key last certain before a master failover
	Dropped       int64            `json:"dropped"`        // puts after a remove read back missing (PutAfterRemoveMayDrop)
	Erased        int64            `json:"erased"`         // keys read back missing after a failed upsert (failedUpsert)
	Leased        int64            `json:"leased"`         // removes refused because a reader held a lease
	SlowestMs     int64            `json:"slowest_ms"`     // the slowest step: one call, or a write and its read-back
	CorruptNotes  []string         `json:"corrupt_notes"`  // the first corrupt reads, described
	LostNotes     []string         `json:"lost_notes"`     // the first lost writes, described
	RolledNotes   []string         `json:"rolled_notes"`   // the first rollbacks, described
}

// NewStats returns empty counters.
func NewStats() *Stats {
	return &Stats{Ops: map[string]int64{}, Keys: map[string]int64{}, Errors: map[string]int64{}}
}

const maxNotes = 10

func note(notes *[]string, format string, args ...any) {
	if len(*notes) < maxNotes {
		*notes = append(*notes, fmt.Sprintf(format, args...))
	}
}

func (s *Stats) corrupt(format string, args ...any) {
	s.Corrupt++
	note(&s.CorruptNotes, format, args...)
}

func (s *Stats) lost(format string, args ...any) {
	s.Lost++
	note(&s.LostNotes, format, args...)
}

func (s *Stats) rolledBack(format string, args ...any) {
	s.RolledBack++
	note(&s.RolledNotes, format, args...)
}

// Add adds o into s.
func (s *Stats) Add(o *Stats) {
	for k, v := range o.Ops {
		s.Ops[k] += v
	}
	for k, v := range o.Keys {
		s.Keys[k] += v
	}
	for k, v := range o.Errors {
		s.Errors[k] += v
	}
	s.BytesVerified += o.BytesVerified
	s.Corrupt += o.Corrupt
	s.Lost += o.Lost
	s.RolledBack += o.RolledBack
	s.Dropped += o.Dropped
	s.Erased += o.Erased
	s.Leased += o.Leased
	s.SlowestMs = max(s.SlowestMs, o.SlowestMs)
	for _, n := range o.CorruptNotes {
		note(&s.CorruptNotes, "%s", n)
	}
	for _, n := range o.LostNotes {
		note(&s.LostNotes, "%s", n)
	}
	for _, n := range o.RolledNotes {
		note(&s.RolledNotes, "%s", n)
	}
}

// Clone returns a copy of s.
func (s *Stats) Clone() *Stats {
	c := &Stats{Ops: maps.Clone(s.Ops), Keys: maps.Clone(s.Keys), Errors: maps.Clone(s.Errors),
		BytesVerified: s.BytesVerified, Corrupt: s.Corrupt, Lost: s.Lost, Leased: s.Leased, SlowestMs: s.SlowestMs, RolledBack: s.RolledBack, Dropped: s.Dropped, Erased: s.Erased,
		CorruptNotes: append([]string(nil), s.CorruptNotes...), LostNotes: append([]string(nil), s.LostNotes...),
		RolledNotes: append([]string(nil), s.RolledNotes...)}
	return c
}

// Calls is the total of Ops.
func (s *Stats) Calls() int64 {
	var n int64
	for _, v := range s.Ops {
		n += v
	}
	return n
}

// ErrorSummary lists the errors, most frequent first.
func (s *Stats) ErrorSummary() string {
	if len(s.Errors) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(s.Errors))
	for k := range s.Errors {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if s.Errors[keys[i]] != s.Errors[keys[j]] {
			return s.Errors[keys[i]] > s.Errors[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, s.Errors[k])
	}
	return strings.Join(parts, "; ")
}
