package hostcache

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
)

// Pushing pages into a peer's pool: a prefill node writes KV pages straight
// into a decode node's host pool with the transfer engine. The peer's pool
// has the same kind, layout and geometry as a local one, and lives in
// another process; what the prefill node knows of it is what the peer
// registered (its segment's buffers) and its layout fingerprint.

// ErrPeerMismatch: a peer pool's layout or buffers do not match the local
// pool's, so its pages cannot be written from it.
var ErrPeerMismatch = errors.New("hostcache: peer pool does not match the local pool")

// RemoteBuffer is one buffer of a peer's pool: its address in the peer's
// process and its size (a transfer segment's buffer).
type RemoteBuffer struct {
	Addr uint64
	Size uint64
}

// Copy is one contiguous copy of a push: Length bytes from Local (in the
// local pool) to Remote (in the peer's pool).
type Copy struct {
	Local  uintptr
	Remote uint64
	Length uint64
}

// Peer is a peer's pool as seen from a local pool of the same shape.
// AppendPush is safe for concurrent use.
type Peer struct {
	local  Pool
	host   *HostPool
	bufs   []peerBuf  // sorted by local address
	delta  []uint64   // per plan component: remote minus local address
	mu     sync.Mutex // guards the scratch below
	runs   []pageRun
	la, ra []uintptr
	ls, rs []uint64
}

type peerBuf struct {
	local  uintptr
	size   uint64
	remote uint64
}

// NewPeer describes the peer's pool: fingerprint is its Fingerprint(), and
// remote its buffers in IterHostPoolBuffers order (what it registers; see
// MatchPoolBuffers to find them in a segment's buffer list). Both must
// match local: the same fingerprint (kind, layout, dtype and geometry) and
// buffers of the same sizes. Otherwise an error wrapping ErrPeerMismatch:
// nothing is ever written into a pool that does not have the layout the
// pages were laid out for.
func NewPeer(local Pool, fingerprint string, remote []RemoteBuffer) (*Peer, error) {
	if isNilPool(local) {
		return nil, &ConfigError{What: "peer", Field: "local pool", Reason: "nil pool"}
	}
	if !local.HasBuffer() {
		return nil, fmt.Errorf("hostcache: peer of %s: %w", local, ErrNoBuffer)
	}
	if fp := local.Fingerprint(); fp != fingerprint {
		return nil, fmt.Errorf("%w: its layout is %q, the local pool's %q", ErrPeerMismatch, fingerprint, fp)
	}
	mine := IterHostPoolBuffers(local)
	if len(mine) != len(remote) {
		return nil, fmt.Errorf("%w: %d buffers, the local pool has %d", ErrPeerMismatch, len(remote), len(mine))
	}
	p := &Peer{local: local}
	for i, b := range mine {
		r := remote[i]
		if r.Size != b.Size {
			return nil, fmt.Errorf("%w: buffer %d (%s) is %d bytes, the local one %d", ErrPeerMismatch, i, b.Name, r.Size, b.Size)
		}
		if r.Addr == 0 || r.Size-1 > ^uint64(0)-r.Addr {
			return nil, fmt.Errorf("%w: buffer %d at %#x (+%d) is not a valid range", ErrPeerMismatch, i, r.Addr, r.Size)
		}
		p.bufs = append(p.bufs, peerBuf{local: b.Addr, size: b.Size, remote: r.Addr})
	}
	// Remote buffers that overlap would take two local buffers' bytes into
	// the same peer memory: refuse them rather than corrupt the peer.
	byRemote := slices.Clone(p.bufs)
	sort.Slice(byRemote, func(i, j int) bool { return byRemote[i].remote < byRemote[j].remote })
	for i := 1; i < len(byRemote); i++ {
		if a, b := byRemote[i-1], byRemote[i]; b.remote-a.remote < a.size {
			return nil, fmt.Errorf("%w: remote buffers at %#x (+%d) and %#x (+%d) overlap", ErrPeerMismatch, a.remote, a.size, b.remote, b.size)
		}
	}
	sort.Slice(p.bufs, func(i, j int) bool { return p.bufs[i].local < p.bufs[j].local })
	if h, ok := local.(*HostPool); ok && h.metaErr == nil {
		// Every entry of a plan component lies in the buffer holding its
		// base, so one delta per component translates it.
		p.host = h
		for _, c := range h.plan.comps {
			b, ok := p.find(c.base, c.size)
			last := c.base + uintptr((h.rows-1)*c.pageStride+uint64(h.plan.reps-1)*c.repStride)
			if b2, ok2 := p.find(last, c.size); !ok || !ok2 || b2 != b {
				p.host = nil // a component across buffers: the generic path
				p.delta = nil
				break
			}
			p.delta = append(p.delta, b.remote-uint64(b.local))
		}
	}
	return p, nil
}

// MatchPoolBuffers finds local's buffers in a segment's buffer list (the
// buffers the peer registered, in order): the first run of consecutive
// buffers with the sizes of IterHostPoolBuffers(local).
func MatchPoolBuffers(local Pool, segment []RemoteBuffer) ([]RemoteBuffer, error) {
	if isNilPool(local) {
		return nil, &ConfigError{What: "peer", Field: "local pool", Reason: "nil pool"}
	}
	mine := IterHostPoolBuffers(local)
	if len(mine) == 0 {
		return nil, fmt.Errorf("hostcache: match buffers of %s: %w", local, ErrNoBuffer)
	}
outer:
	for start := 0; start+len(mine) <= len(segment); start++ {
		for i, b := range mine {
			if segment[start+i].Size != b.Size {
				continue outer
			}
		}
		return segment[start : start+len(mine)], nil
	}
	return nil, fmt.Errorf("%w: no run of %d registered buffers has the sizes of %s's buffers", ErrPeerMismatch, len(mine), local)
}

// find returns the buffer holding [addr, addr+n).
func (p *Peer) find(addr uintptr, n uint64) (peerBuf, bool) {
	i := sort.Search(len(p.bufs), func(i int) bool { return p.bufs[i].local > addr }) - 1
	if i < 0 {
		return peerBuf{}, false
	}
	b := p.bufs[i]
	off := uint64(addr - b.local)
	return b, off < b.size && n <= b.size-off
}

// AppendPush appends to dst the copies that write the local pool's pages
// at localIndices into the peer's pages at remoteIndices (flat token
// indices, a whole number of pages each, page i to page i). Where runs of
// pages are consecutive on both sides, each component's bytes of the run
// are contiguous on both sides and become one copy: 128 consecutive
// layer-first MLA pages of 61 layers are 61 copies, not 7,808.
func (p *Peer) AppendPush(dst []Copy, localIndices, remoteIndices []int64) ([]Copy, error) {
	if len(localIndices) != len(remoteIndices) {
		return dst, &IndexError{Pool: p.local.String(), Page: -1, Count: len(remoteIndices),
			Reason: fmt.Sprintf("%d local and %d remote indices", len(localIndices), len(remoteIndices))}
	}
	if p.host != nil {
		return p.pushPlan(dst, localIndices, remoteIndices)
	}
	return p.pushMeta(dst, localIndices, remoteIndices)
}

// AppendPushPerBuffer is AppendPush without coalescing: one copy per page
// buffer (per entry of the page meta), as a caller that sends the meta as
// it is would. It is the baseline the coalesced plan is measured against.
func (p *Peer) AppendPushPerBuffer(dst []Copy, localIndices, remoteIndices []int64) ([]Copy, error) {
	if len(localIndices) != len(remoteIndices) {
		return dst, &IndexError{Pool: p.local.String(), Page: -1, Count: len(remoteIndices),
			Reason: fmt.Sprintf("%d local and %d remote indices", len(localIndices), len(remoteIndices))}
	}
	return p.pushMetaEach(dst, localIndices, remoteIndices, false)
}

// pushPlan walks the pool's plan: entry j of component c on page row r is
// at base + r*pageStride + j*repStride, on both sides. Pages whose rows
// follow each other on both sides form a run; in a component whose pages
// are back to back (pageStride == size), a run is one copy.
func (p *Peer) pushPlan(dst []Copy, li, ri []int64) ([]Copy, error) {
	h := p.host
	P := h.pageSize
	if err := checkPushIndices(h, li); err != nil {
		return dst, err
	}
	if err := checkPushIndices(h, ri); err != nil {
		return dst, err
	}
	pages := len(li) / P
	p.mu.Lock()
	defer p.mu.Unlock()
	runs := p.runs[:0]
	uP := uint64(P)
	for pg := 0; pg < pages; pg++ {
		lrow, rrow := uint64(li[pg*P])/uP, uint64(ri[pg*P])/uP
		if n := len(runs); n > 0 {
			r := &runs[n-1]
			if lrow == r.lrow+r.pages && rrow == r.rrow+r.pages {
				r.pages++
				continue
			}
		}
		runs = append(runs, pageRun{lrow: lrow, rrow: rrow, pages: 1})
	}
	p.runs = runs
	for ci, c := range h.plan.comps {
		delta := p.delta[ci]
		contiguous := c.pageStride == c.size
		for k := 0; k < h.plan.reps; k++ {
			rep := uint64(k) * c.repStride
			for _, r := range runs {
				la := c.base + uintptr(r.lrow*c.pageStride+rep)
				ra := uint64(c.base) + r.rrow*c.pageStride + rep + delta
				if contiguous {
					dst = append(dst, Copy{Local: la, Remote: ra, Length: r.pages * c.size})
					continue
				}
				for i := uint64(0); i < r.pages; i++ {
					dst = append(dst, Copy{Local: la + uintptr(i*c.pageStride), Remote: ra + i*c.pageStride, Length: c.size})
				}
			}
		}
	}
	return dst, nil
}

// pageRun is pages consecutive on both sides: local rows lrow.., remote
// rows rrow...
type pageRun struct {
	lrow, rrow, pages uint64
}

// checkPushIndices checks what AppendPageBufferMeta checks: a whole number
// of pages, each starting at a non-negative multiple of P inside the pool.
func checkPushIndices(h *HostPool, idx []int64) error {
	P := h.pageSize
	if len(idx) == 0 {
		return &IndexError{Pool: h.desc, Page: -1, Reason: "no host indices"}
	}
	if len(idx)%P != 0 {
		return &IndexError{Pool: h.desc, Page: -1, Count: len(idx), Reason: fmt.Sprintf("%d host indices is not a multiple of the page size %d", len(idx), P)}
	}
	for pg := 0; pg < len(idx)/P; pg++ {
		i := idx[pg*P]
		if i < 0 || i%int64(P) != 0 || uint64(i)/uint64(P) >= h.rows {
			return h.badIndex(pg, i)
		}
	}
	return nil
}

// pushMeta is the generic path: the page meta of both sides (the remote
// side's computed on the local pool and translated), coalesced per entry
// position across pages.
func (p *Peer) pushMeta(dst []Copy, li, ri []int64) ([]Copy, error) {
	return p.pushMetaEach(dst, li, ri, true)
}

func (p *Peer) pushMetaEach(dst []Copy, li, ri []int64, coalesce bool) ([]Copy, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if p.la, p.ls, err = p.local.AppendPageBufferMeta(p.la[:0], p.ls[:0], li); err != nil {
		return dst, err
	}
	if p.ra, p.rs, err = p.local.AppendPageBufferMeta(p.ra[:0], p.rs[:0], ri); err != nil {
		return dst, err
	}
	per, err := p.local.EntriesPerPage()
	if err != nil {
		return dst, err
	}
	pages := len(p.la) / per
	start := len(dst)
	for j := 0; j < per; j++ {
		var cur Copy
		for pg := 0; pg < pages; pg++ {
			e := pg*per + j
			size := p.ls[e]
			if size == 0 {
				continue
			}
			b, ok := p.find(p.ra[e], size)
			if !ok {
				return dst[:start], fmt.Errorf("%w: entry %d of page %d is outside the pool's buffers", ErrPeerMismatch, j, pg)
			}
			la, ra := p.la[e], b.remote+uint64(p.ra[e]-b.local)
			if coalesce && cur.Length > 0 && la == cur.Local+uintptr(cur.Length) && ra == cur.Remote+cur.Length {
				cur.Length += size
				continue
			}
			if cur.Length > 0 {
				dst = append(dst, cur)
			}
			cur = Copy{Local: la, Remote: ra, Length: size}
		}
		if cur.Length > 0 {
			dst = append(dst, cur)
		}
	}
	return dst, nil
}

// isNil reports whether v is nil or an interface holding a nil pointer (a
// typed nil store given where an interface is taken).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}

// isNilPool reports whether p is nil or a typed nil (the Pool interface is
// sealed to these two types).
func isNilPool(p Pool) bool {
	switch v := p.(type) {
	case nil:
		return true
	case *HostPool:
		return v == nil
	case *PoolGroup:
		return v == nil
	}
	return false
}
