package hostcache_test

import (
	"errors"
	"testing"

	hc "github.com/mooncake-go/mooncake-go/hostcache"
)

// TestDSAIndexerTypedNilAnchor: a typed-nil anchor pool is refused like a
// nil one (it panicked in (*HostPool).Layout).
func TestDSAIndexerTypedNilAnchor(t *testing.T) {
	for name, anchor := range map[string]hc.Pool{"nil": nil, "typed nil": (*hc.HostPool)(nil)} {
		var p *hc.HostPool
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s anchor: panic %v", name, r)
				}
			}()
			p, err = hc.NewDSAIndexerPool(anchor, hc.DSAIndexerConfig{Layers: 1, IndexHeadDim: 128, QuantBlockSize: 128})
		}()
		if p != nil || !errors.Is(err, hc.ErrInvalidConfig) {
			t.Errorf("%s anchor: %v, %v; want ErrInvalidConfig", name, p, err)
		}
	}
}
