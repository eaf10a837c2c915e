package hostcache_test

import (
	"errors"
	"math"
	"testing"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
	ht "github.com/mooncake-go/mooncake-go/hostcache/hostcachetest"
)

// failingAlloc fails every allocation with an error of its own.
type failingAlloc struct{}

var errNoMemory = errors.New("no memory for you")

func (failingAlloc) Alloc(uint64) (hc.Region, error) { return hc.Region{}, errNoMemory }
func (failingAlloc) Free(hc.Region) error            { return nil }

// TestHostileThirdRound pins the hostcache findings of the third hostile
// round (issue 21): each input is refused with a typed error.
func TestHostileThirdRound(t *testing.T) {
	mla := func(a hc.Allocator) (*hc.HostPool, error) {
		return hc.NewMLAPool(hc.MLAConfig{Layers: 2, LatentDim: 64, DType: hc.BF16, PageSize: 4, Tokens: 16, Layout: hc.LayerFirst, Allocator: a})
	}
	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"key scheme: split ranks overflow", func() error {
			_, err := hc.NewKeyScheme(hc.KeyConfig{TPRank: math.MaxInt32 / 2, TPSize: math.MaxInt32/2 + 1, SplitFactor: 4})
			return err
		}, hc.ErrInvalidConfig},
		{"key scheme: TP size past MaxRanks", func() error {
			_, err := hc.NewKeyScheme(hc.KeyConfig{TPRank: 0, TPSize: hc.MaxRanks + 1})
			return err
		}, hc.ErrInvalidConfig},
		{"key scheme: split rank at the bound", func() error {
			_, err := hc.NewKeyScheme(hc.KeyConfig{TPRank: hc.MaxRanks - 1, TPSize: hc.MaxRanks, SplitFactor: 1 << 10})
			return err
		}, nil},
		{"tp_lcm_size 1.5", func() error {
			_, err := hc.OptionsFromExtraConfig(map[string]any{"tp_lcm_size": 1.5}, hc.Options{})
			return err
		}, hc.ErrInvalidConfig},
		{"tp_lcm_size 4.0", func() error {
			_, err := hc.OptionsFromExtraConfig(map[string]any{"tp_lcm_size": 4.0}, hc.Options{})
			return err
		}, nil},
		{"a caller's allocator fails", func() error {
			_, err := mla(failingAlloc{})
			if err != nil && !errors.Is(err, errNoMemory) {
				t.Errorf("the allocator's own error is lost: %v", err)
			}
			return err
		}, hc.ErrAlloc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("%v, want %v", err, tc.want)
			}
		})
	}

	t.Run("peer with overlapping remote buffers", func(t *testing.T) {
		local, err := hc.NewMHAPool(hc.MHAConfig{Layers: 2, Heads: 2, HeadDim: 64, DType: hc.BF16, PageSize: 4, Tokens: 16, Layout: hc.LayerFirst})
		if err != nil {
			t.Fatal(err)
		}
		defer local.Close()
		bufs := hc.IterHostPoolBuffers(local)
		if len(bufs) < 2 {
			t.Fatalf("an MHA pool with %d buffer(s): the case needs two", len(bufs))
		}
		remote := make([]hc.RemoteBuffer, len(bufs))
		for i, b := range bufs {
			remote[i] = hc.RemoteBuffer{Addr: 0x100000 + uint64(i)*b.Size/2, Size: b.Size} // each overlaps the next
		}
		if _, err := hc.NewPeer(local, local.Fingerprint(), remote); !errors.Is(err, hc.ErrPeerMismatch) {
			t.Errorf("%v, want ErrPeerMismatch", err)
		}
		for i, b := range bufs {
			remote[i] = hc.RemoteBuffer{Addr: 0x100000 + uint64(i)*(b.Size+4096), Size: b.Size}
		}
		if _, err := hc.NewPeer(local, local.Fingerprint(), remote); err != nil {
			t.Errorf("disjoint remote buffers refused: %v", err)
		}
	})

	t.Run("Backend.Close with a failing unregister", func(t *testing.T) {
		pool, err := mla(nil)
		if err != nil {
			t.Fatal(err)
		}
		store := ht.NewFakeStore()
		b, err := hc.NewBackend(store, hc.Options{RankReplicated: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.RegisterPool(pool); err != nil {
			t.Fatal(err)
		}
		_ = store.Close() // unregistering now fails
		err = b.Close()
		var se *hc.StoreError
		if !errors.As(err, &se) || se.Op != "UnregisterBuffer" {
			t.Errorf("%v, want a *StoreError of UnregisterBuffer", err)
		}
		if err := pool.Close(); err != nil {
			t.Errorf("the pool stays registered after Backend.Close: %v", err)
		}
	})
}
