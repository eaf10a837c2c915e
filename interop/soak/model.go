package soak

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// entry is what a writer knows of one of its keys: the versions it may
// hold (0: absent). One version when the last write or remove was
// acknowledged; each one that failed since adds the version it tried.
type entry struct {
	vers [4]uint32
	n    int // 0 means {0}: never written
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

// acked records an acknowledged write of ver (0: a remove).
func (e *entry) acked(ver uint32) { *e = entry{vers: [4]uint32{ver}, n: 1} }

// failed records a write of ver (0: a remove) that returned an error: the
// key may now hold ver too. Past four possibilities the oldest is dropped
// (a verdict may then call a read lost that was not; soaks have not come
// near).
func (e *entry) failed(ver uint32) {
	if e.n == 0 {
		e.vers[0], e.n = 0, 1
	}
	if e.n == len(e.vers) {
		copy(e.vers[:], e.vers[1:])
		e.n--
	}
	e.vers[e.n] = ver
	e.n++
}

// verdict compares what a read found (0: not found) with the model and,
// when it is one of the possibilities, makes it the certain version.
func (e *entry) verdict(found uint32) bool {
	for _, v := range e.possible() {
		if v == found {
			e.acked(found)
			return true
		}
	}
	return false
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
	Leased        int64            `json:"leased"`         // removes refused because a reader held a lease
	CorruptNotes  []string         `json:"corrupt_notes"`  // the first corrupt reads, described
	LostNotes     []string         `json:"lost_notes"`     // the first lost writes, described
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
	s.Leased += o.Leased
	for _, n := range o.CorruptNotes {
		note(&s.CorruptNotes, "%s", n)
	}
	for _, n := range o.LostNotes {
		note(&s.LostNotes, "%s", n)
	}
}

// Clone returns a copy of s.
func (s *Stats) Clone() *Stats {
	c := &Stats{Ops: maps.Clone(s.Ops), Keys: maps.Clone(s.Keys), Errors: maps.Clone(s.Errors),
		BytesVerified: s.BytesVerified, Corrupt: s.Corrupt, Lost: s.Lost, Leased: s.Leased,
		CorruptNotes: append([]string(nil), s.CorruptNotes...), LostNotes: append([]string(nil), s.LostNotes...)}
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
