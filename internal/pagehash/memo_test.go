package pagehash

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"testing"
)

var memoSpecs = []Spec{
	{PageSize: 4}, {PageSize: 4, Bigram: true}, {PageSize: 3, Wide: true}, {PageSize: 2, Bigram: true, Wide: true}, {PageSize: 1},
}

// prompts returns n prompts of up to 12 pages that share prefixes with
// each other (a common head, then branches), some with wide ids.
func prompts(rng *rand.Rand, n int, s Spec) [][]int64 {
	head := make([]int64, 5*s.PageSize)
	for i := range head {
		head[i] = rng.Int64N(1000)
	}
	var out [][]int64
	for range n {
		p := append([]int64(nil), head[:rng.IntN(len(head)+1)]...)
		if len(out) > 0 && rng.IntN(2) == 0 {
			o := out[rng.IntN(len(out))]
			p = append(p[:0], o[:rng.IntN(len(o)+1)]...)
		}
		for range rng.IntN(7 * s.PageSize) {
			t := rng.Int64N(1000)
			if s.Wide && rng.IntN(40) == 0 {
				t = 1<<32 + rng.Int64N(1000)
			}
			p = append(p, t)
		}
		out = append(out, p)
	}
	return out
}

// TestMemoDigests: with a memo (large, and small enough to evict all the
// time), every digest equals the one hashed without it, for both entry
// points, with and without a prior.
func TestMemoDigests(t *testing.T) {
	for _, s := range memoSpecs {
		for _, size := range []int{1 << 12, 3} {
			rng := rand.New(rand.NewPCG(uint64(s.PageSize), uint64(size)))
			ms := s
			ms.Memo = NewMemo(size, s)
			var prior [Size]byte
			for i, p := range prompts(rng, 300, s) {
				pr := &prior
				if i%3 == 0 {
					pr = nil
				}
				want, bad := AppendInt64(nil, pr, p, s)
				got, gbad := AppendInt64(nil, pr, p, ms)
				if bad != gbad || len(got) != len(want) {
					t.Fatalf("%+v memo %d: prompt %d: %d digests (bad %d), want %d (bad %d)", s, size, i, len(got), gbad, len(want), bad)
				}
				for j := range want {
					if got[j] != want[j] {
						t.Fatalf("%+v memo %d: prompt %d page %d differs", s, size, i, j)
					}
				}
				if bad < 0 && !s.Wide {
					u := make([]uint32, len(p))
					for j, x := range p {
						u[j] = uint32(x)
					}
					if got := AppendUint32(nil, pr, u, ms); len(got) != len(want) || (len(got) > 0 && got[len(got)-1] != want[len(want)-1]) {
						t.Fatalf("%+v memo %d: prompt %d: AppendUint32 differs", s, size, i)
					}
				}
				if len(want) > 0 {
					prior = want[len(want)-1]
				}
			}
			st := ms.Memo.Stats()
			if st.Pages > len(ms.Memo.slots) || st.Hits == 0 && size > 3 {
				t.Fatalf("%+v memo %d: %+v", s, size, st)
			}
		}
	}
}

// TestMemoComparesInFull: an entry whose key hash matches but whose input
// differs (prior, words, length, chaining, wide) is not a hit.
func TestMemoComparesInFull(t *testing.T) {
	m := NewMemo(64, Spec{PageSize: 2, Wide: true})
	prior, digest := [Size]byte{1}, [Size]byte{2}
	words := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 7), 8)
	const key = 42
	m.put(key, true, false, &prior, words, &digest)
	for _, c := range []struct {
		name          string
		chained, wide bool
		prior         [Size]byte
		words         []byte
		hit           bool
	}{
		{"same input", true, false, prior, words, true},
		{"other prior", true, false, [Size]byte{3}, words, false},
		{"other words", true, false, prior, []byte{7, 0, 0, 0, 9, 0, 0, 0}, false},
		{"shorter", true, false, prior, words[:4], false},
		{"unchained", false, false, prior, words, false},
		{"wide", true, true, prior, words, false},
	} {
		sum := c.prior
		if hit := m.get(key, c.chained, c.wide, &sum, c.words); hit != c.hit {
			t.Errorf("%s: hit %v, want %v", c.name, hit, c.hit)
		} else if hit && sum != digest {
			t.Errorf("%s: digest not given", c.name)
		} else if !hit && sum != c.prior {
			t.Errorf("%s: a miss changed the prior", c.name)
		}
	}
}

// TestMemoConcurrent hashes shared prompts from many goroutines through one
// small memo (run it under -race).
func TestMemoConcurrent(t *testing.T) {
	s := Spec{PageSize: 4}
	ms := s
	ms.Memo = NewMemo(40, s)
	ps := prompts(rand.New(rand.NewPCG(5, 6)), 64, s)
	want := make([][][Size]byte, len(ps))
	for i, p := range ps {
		want[i], _ = AppendInt64[[Size]byte](nil, nil, p, s)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst [][Size]byte
			for r := range 200 {
				i := (g*31 + r) % len(ps)
				dst, _ = AppendInt64(dst[:0], nil, ps[i], ms)
				for j := range dst {
					if dst[j] != want[i][j] {
						t.Errorf("prompt %d page %d differs", i, j)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestMemoAllocatesNothingWarm(t *testing.T) {
	s := Spec{PageSize: 16}
	s.Memo = NewMemo(1024, s)
	toks := make([]uint32, 64*16)
	for i := range toks {
		toks[i] = uint32(i)
	}
	dst := make([][Size]byte, 0, 64)
	AppendUint32(dst, nil, toks, s)
	if n := testing.AllocsPerRun(100, func() { dst = AppendUint32(dst[:0], nil, toks, s) }); n != 0 {
		t.Fatalf("%v allocations per warm prompt", n)
	}
}

func FuzzMemo(f *testing.F) {
	f.Add(uint8(4), false, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	f.Add(uint8(1), true, []byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ps uint8, bigram bool, raw []byte) {
		s := Spec{PageSize: int(ps%8) + 1, Bigram: bigram}
		toks := make([]uint32, len(raw)/2)
		for i := range toks {
			toks[i] = uint32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		ms := s
		ms.Memo = NewMemo(2, s)
		want := AppendUint32[[Size]byte](nil, nil, toks, s)
		for range 2 { // a miss, then (mostly) hits
			got := AppendUint32[[Size]byte](nil, nil, toks, ms)
			if len(got) != len(want) {
				t.Fatalf("%d digests, want %d", len(got), len(want))
			}
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("page %d differs", j)
				}
			}
		}
	})
}
