package mooncake

import (
	"errors"
	"sync"

	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// Transfer sessions (upstream's batch_get_session_* and
// batch_put_session_* calls) move byte ranges of objects rather than whole
// objects, for one master round trip per session instead of one per call.
//
// What they are for, from upstream's RealClient: a get session looks its
// keys up once, takes the read lease and keeps one complete memory replica
// of each; every range read after that goes straight to the replica (no
// master RPC) while the lease runs, so a reader can fetch, say, one layer
// of many KV pages at a time as it needs them. A put session reserves its
// objects at the master without writing them; range writes then fill them
// piece by piece (a prefill writing each layer as it is computed), and
// End makes them readable in one call, or Revoke drops them. An object
// whose put session is open is being written: gets report
// ErrReplicaIsNotReady until End.
//
// Upstream keeps sessions per key and per client: a second get session of
// a key replaces the first. The Go types own their keys instead: a key is
// in at most one live GetSession of a Store (starting another reports
// ErrInvalidParams for it), and a session reads and writes only its own
// keys. The zero value of either type, and a session after End, refuse
// every call with ErrSessionEnded; End and Revoke twice are harmless.
//
// A backend without sessions (Capabilities.Sessions false: the native
// backend over an upstream that predates them, v0.3.12.post1) refuses
// StartGetSession and StartPutSession as a whole with ErrNotSupported.

// ErrSessionEnded is wrapped (with ErrInvalidParams) by calls on a session
// that has ended or was never started.
var ErrSessionEnded = errors.New("session ended (or never started)")

// Range is one piece of an object and the registered memory it moves
// between: Size bytes at Offset in the object, at Addr in memory.
type Range struct {
	Addr   uintptr
	Offset uint64
	Size   uint64
}

// KeyRanges names ranges of one object.
type KeyRanges struct {
	Key    string
	Ranges []Range
}

// sessionScratch packs one session call: the keys sent and their ranges.
type sessionScratch struct {
	k     hostmem.Keys
	r     cstore.Ranges
	index []int // sent key -> caller's index
	res   []int64
}

var sessionPool = sync.Pool{New: func() any { return new(sessionScratch) }}

func getScratch() *sessionScratch {
	sc := sessionPool.Get().(*sessionScratch)
	sc.k.Reset()
	sc.r.Addrs, sc.r.Sizes, sc.r.At = sc.r.Addrs[:0], sc.r.Sizes[:0], sc.r.At[:0]
	sc.r.Offsets = append(sc.r.Offsets[:0], 0)
	sc.index = sc.index[:0]
	return sc
}

func putScratch(sc *sessionScratch) {
	if cap(sc.r.Addrs) > 1<<16 || cap(sc.k.Buf) > 1<<20 {
		return // do not keep unusually large buffers alive
	}
	sessionPool.Put(sc)
}

// add queues key (the caller's index i) and its ranges.
func (sc *sessionScratch) add(i int, key string, ranges []Range) {
	sc.k.Append(key)
	sc.index = append(sc.index, i)
	for _, r := range ranges {
		sc.r.Addrs = append(sc.r.Addrs, r.Addr)
		sc.r.Sizes = append(sc.r.Sizes, r.Size)
		sc.r.At = append(sc.r.At, r.Offset)
	}
	sc.r.Offsets = append(sc.r.Offsets, uint64(len(sc.r.Addrs)))
}

// send makes one crossing with the queued keys and scatters the results
// to res at the callers' indexes.
func (sc *sessionScratch) send(s *Store, op Op, res []int64, cross func(cstore.Client, *hostmem.Keys, []int64) int32) error {
	if len(sc.index) == 0 {
		return nil
	}
	sc.res = resultsFor(sc.res, len(sc.index))
	c := s.c()
	if !c.gate.Enter() {
		return closedErr(op, "")
	}
	t0 := now()
	rc := cross(c.handle, &sc.k, sc.res)
	c.stats.batch(op, t0, rc, sc.res, nil)
	c.gate.Leave()
	if rc != 0 {
		return refused(op, &sc.k, rc) // key failures are the caller's to report
	}
	for j, i := range sc.index {
		res[i] = sc.res[j]
	}
	return nil
}

func sessionEnded(op Op) error {
	return &Error{Op: op, Code: ErrInvalidParams, Err: ErrSessionEnded}
}

// GetSession is a get session over some keys (see the section comment).
// Its methods are safe for concurrent use.
type GetSession struct {
	st   *Store
	mu   sync.Mutex
	keys map[string]struct{} // the keys this session started and still holds
}

// StartGetSession starts a get session of keys: each is looked up once,
// granting a read lease as a get does. results[i] is 0, or
// ErrObjectNotFound, ErrInvalidReplica (no complete memory replica),
// ErrLeaseExpired, or ErrInvalidParams for a key that another live
// GetSession of this Store holds. The session holds the keys that started;
// End it when done. When some keys failed the error is a *BatchError and
// the session (holding the others) is returned all the same.
func (s *Store) StartGetSession(keys *hostmem.Keys, results []int64) (*GetSession, []int64, error) {
	const op = OpBatchGetSessionStart
	packed, err := checkedKeys(op, keys)
	if err != nil {
		return nil, nil, err
	}
	names := packed.Strings()
	res := resultsFor(results, len(names))
	g := &GetSession{st: s, keys: make(map[string]struct{}, len(names))}
	c := s.c()
	if c == closedConn {
		return nil, nil, closedErr(op, "")
	}
	sc := getScratch()
	defer putScratch(sc)
	c.sessMu.Lock()
	for i, k := range names {
		_, taken := c.getSessions[k]
		_, twice := g.keys[k]
		if taken || twice {
			res[i] = int64(ErrInvalidParams)
			continue
		}
		g.keys[k] = struct{}{}
		if c.getSessions == nil {
			c.getSessions = map[string]*GetSession{}
		}
		c.getSessions[k] = g // reserved now, so a concurrent start cannot take it
		sc.add(i, k, nil)
	}
	c.sessMu.Unlock()
	err = sc.send(s, op, res, func(h cstore.Client, k *hostmem.Keys, r []int64) int32 {
		return h.BatchGetSessionStart(k.Buf, k.Offsets, r)
	})
	for _, i := range sc.index {
		if err != nil || res[i] != 0 {
			g.release(names[i])
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return g, res, batchError(op, res, func(i int) string { return names[i] })
}

// release forgets key in g and in its store's owner table.
func (g *GetSession) release(key string) {
	g.st.c().sessMu.Lock()
	if c := g.st.c(); c.getSessions[key] == g {
		delete(c.getSessions, key)
	}
	g.st.c().sessMu.Unlock()
	g.mu.Lock()
	delete(g.keys, key)
	g.mu.Unlock()
}

// ReadRanges reads ranges of the session's objects into registered memory,
// asking the master nothing. results[i] is the bytes read for reqs[i], or
// ErrInvalidParams (a key this session does not hold, a range past the
// object's end), ErrLeaseExpired (the lease ran out: the key leaves the
// session; start a new one), ErrTransferFail (memory not registered, in
// the embedded engine and over RDMA); the error is a *BatchError when any
// entry failed.
func (g *GetSession) ReadRanges(reqs []KeyRanges, results []int64) ([]int64, error) {
	const op = OpBatchGetIntoMultiBufferRanges
	if g == nil || g.st == nil {
		return nil, sessionEnded(op)
	}
	res := resultsFor(results, len(reqs))
	sc := getScratch()
	defer putScratch(sc)
	g.mu.Lock()
	if g.keys == nil {
		g.mu.Unlock()
		return nil, sessionEnded(op)
	}
	for i, rq := range reqs {
		if _, ok := g.keys[rq.Key]; !ok {
			res[i] = int64(ErrInvalidParams)
			continue
		}
		sc.add(i, rq.Key, rq.Ranges)
	}
	g.mu.Unlock()
	err := sc.send(g.st, op, res, func(h cstore.Client, k *hostmem.Keys, r []int64) int32 {
		return h.BatchGetIntoMultiBufferRanges(k.Buf, k.Offsets, &sc.r, r)
	})
	if err != nil {
		return nil, err
	}
	for _, i := range sc.index {
		if res[i] == int64(ErrLeaseExpired) {
			g.release(reqs[i].Key) // upstream dropped it
		}
	}
	return res, batchError(op, res, func(i int) string { return reqs[i].Key })
}

// End ends the session: its keys' kept replicas are dropped (their leases
// run out on their own). Ending again does nothing.
func (g *GetSession) End() error {
	const op = OpBatchGetSessionEnd
	if g == nil || g.st == nil {
		return nil
	}
	g.mu.Lock()
	keys := g.keys
	g.keys = nil
	g.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	c := g.st.c()
	sc := getScratch()
	defer putScratch(sc)
	c.sessMu.Lock()
	for k := range keys {
		if c.getSessions[k] == g {
			delete(c.getSessions, k)
		}
		sc.k.Append(k)
	}
	c.sessMu.Unlock()
	if !c.gate.Enter() {
		return nil // closed: the client and its sessions are gone
	}
	rc := c.handle.BatchGetSessionEnd(sc.k.Buf, sc.k.Offsets)
	c.gate.Leave()
	_, err := callResult(op, rc, nil)
	return err
}

// putKeyState is where one key of a put session is.
type putKeyState int8

const (
	putOpen putKeyState = iota
	putEnded
	putRevoked
	putFailed // its start failed
)

// PutSession is a put session over some keys (see the section comment).
// Its methods are safe for concurrent use.
type PutSession struct {
	st    *Store
	mu    sync.Mutex
	keys  []string
	state []putKeyState
	code  []int64 // a failed start's code
	index map[string]int
}

// StartPutSession reserves keys[i] as an object of sizes[i] bytes, placed
// by the view's ReplicateConfig, without writing it. results[i] is 0, or
// ErrInvalidParams (size 0, a key twice, a key in another open put
// session), ErrObjectAlreadyExists, or the master's code. The keys that
// started must be ended or revoked. When some keys failed the error is a
// *BatchError and the session (holding the others) is returned all the
// same.
func (s *Store) StartPutSession(keys *hostmem.Keys, sizes []uint64, results []int64) (*PutSession, []int64, error) {
	const op = OpBatchPutSessionStart
	packed, err := checkedKeys(op, keys)
	if err != nil {
		return nil, nil, err
	}
	if len(sizes) != packed.Len() {
		return nil, nil, argErr(op, "%d keys, %d sizes", packed.Len(), len(sizes))
	}
	names := packed.Strings()
	if s.policyError() != nil {
		return nil, nil, &Error{Op: op, Code: ErrInvalidParams, Err: s.policyError()}
	}
	res := resultsFor(results, len(names))
	p := &PutSession{st: s, keys: names, state: make([]putKeyState, len(names)),
		code: make([]int64, len(names)), index: make(map[string]int, len(names))}
	for i, k := range names {
		if _, twice := p.index[k]; !twice {
			p.index[k] = i
		}
	}
	sc := getScratch()
	defer putScratch(sc)
	for i, k := range names {
		sc.add(i, k, nil)
	}
	err = sc.send(s, op, res, func(h cstore.Client, k *hostmem.Keys, r []int64) int32 {
		return h.BatchPutSessionStart(k.Buf, k.Offsets, sizes, &s.cpolicy, r)
	})
	if err != nil {
		return nil, nil, err
	}
	for i := range names {
		if res[i] != 0 {
			p.state[i], p.code[i] = putFailed, res[i]
		}
	}
	return p, res, batchError(op, res, func(i int) string { return names[i] })
}

// WriteRanges writes ranges of the session's reserved objects from
// registered memory. results[i] is the bytes written for reqs[i], or
// ErrInvalidParams (a key not open in this session, a range past the
// object's end), ErrTransferFail.
func (p *PutSession) WriteRanges(reqs []KeyRanges, results []int64) ([]int64, error) {
	const op = OpBatchPutFromMultiBufferRanges
	if p == nil || p.st == nil {
		return nil, sessionEnded(op)
	}
	sc := getScratch()
	defer putScratch(sc)
	p.mu.Lock()
	if !p.open() {
		p.mu.Unlock()
		return nil, sessionEnded(op) // every key ended, revoked or never started
	}
	res := resultsFor(results, len(reqs))
	for i, rq := range reqs {
		if j, ok := p.index[rq.Key]; !ok || p.state[j] != putOpen {
			res[i] = int64(ErrInvalidParams)
			continue
		}
		sc.add(i, rq.Key, rq.Ranges)
	}
	p.mu.Unlock()
	err := sc.send(p.st, op, res, func(h cstore.Client, k *hostmem.Keys, r []int64) int32 {
		return h.BatchPutFromMultiBufferRanges(k.Buf, k.Offsets, &sc.r, r)
	})
	if err != nil {
		return nil, err
	}
	return res, batchError(op, res, func(i int) string { return reqs[i].Key })
}

// open reports whether a key of the session is still open (p.mu held).
func (p *PutSession) open() bool {
	for _, st := range p.state {
		if st == putOpen {
			return true
		}
	}
	return false
}

// End makes the session's open objects readable, once the range writes in
// flight have finished. results[i] is for the session's key i: 0 (ended,
// now or before), the code of a start that failed, ErrInvalidParams for a
// key revoked, or the master's code for an end that failed, which leaves
// the key open (End or Revoke again). A key whose start failed keeps its
// code, so End's *BatchError lists every key that did not become
// readable. A session none of whose keys started needs no End.
func (p *PutSession) End(results []int64) ([]int64, error) {
	return p.settle(OpBatchPutSessionEnd, true, results)
}

// Revoke drops the session's open reservations, once the range writes in
// flight have finished. results[i] is for the session's key i: 0 (revoked
// now or before, or never reserved), ErrInvalidParams for a key ended, or
// the master's code for a revoke that failed, which leaves the key open.
func (p *PutSession) Revoke(results []int64) ([]int64, error) {
	return p.settle(OpBatchPutSessionRevoke, false, results)
}

func (p *PutSession) settle(op Op, commit bool, results []int64) ([]int64, error) {
	if p == nil || p.st == nil {
		return nil, sessionEnded(op)
	}
	res := resultsFor(results, len(p.keys))
	sc := getScratch()
	defer putScratch(sc)
	// Held across the call, so that two settles of one session do not
	// both send a key.
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.keys {
		switch st := p.state[i]; {
		case st == putOpen:
			sc.add(i, p.keys[i], nil)
		case st == putFailed:
			res[i] = 0
			if commit {
				res[i] = p.code[i]
			}
		case (st == putEnded) == commit:
			res[i] = 0
		default:
			res[i] = int64(ErrInvalidParams)
		}
	}
	err := sc.send(p.st, op, res, func(h cstore.Client, k *hostmem.Keys, r []int64) int32 {
		return h.BatchPutSessionSettle(k.Buf, k.Offsets, commit, r)
	})
	if err != nil {
		return nil, err
	}
	for _, i := range sc.index {
		if res[i] == 0 {
			p.state[i] = putRevoked
			if commit {
				p.state[i] = putEnded
			}
		}
	}
	return res, batchError(op, res, func(i int) string { return p.keys[i] })
}

// GetIntoRanges reads byte ranges of objects into registered memory in one
// call, without a session (upstream's get_into_ranges): each range of
// reqs[i] reads Size bytes at Offset of object reqs[i].Key into Addr. Each
// key is looked up once per call, granting a read lease. results has one
// entry per range, in order (reqs[0]'s ranges first): the bytes read, the
// key's error (ErrObjectNotFound, ...), or ErrInvalidParams for a range
// past the object's end or into memory that is not registered.
func (s *Store) GetIntoRanges(reqs []KeyRanges, results []int64) ([]int64, error) {
	const op = OpGetIntoRanges
	total := 0
	for _, rq := range reqs {
		total += len(rq.Ranges)
	}
	res := resultsFor(results, total)
	if len(reqs) == 0 {
		return res, nil
	}
	sc := getScratch()
	defer putScratch(sc)
	for i, rq := range reqs {
		sc.add(i, rq.Key, rq.Ranges)
	}
	c := s.c()
	if !c.gate.Enter() {
		return nil, closedErr(op, "")
	}
	t0 := now()
	rc := c.handle.GetIntoRanges(sc.k.Buf, sc.k.Offsets, &sc.r, res)
	c.stats.batch(op, t0, rc, res, nil) // a "key" of this call is one range
	c.gate.Leave()
	if rc != 0 {
		return nil, refused(op, &sc.k, rc)
	}
	return res, batchError(op, res, func(i int) string { return rangeKey(reqs, i) })
}

// rangeKey is the key of the i-th range of reqs.
func rangeKey(reqs []KeyRanges, i int) string {
	for _, rq := range reqs {
		if i < len(rq.Ranges) {
			return rq.Key
		}
		i -= len(rq.Ranges)
	}
	return ""
}
