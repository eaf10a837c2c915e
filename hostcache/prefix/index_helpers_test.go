package prefix_test

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/hostcache"
	"github.com/mooncake-go/mooncake-go/hostcache/prefix"
)

// testScheme is SGLang's MHA layout of one TP rank: two components per
// page, "<hash>_0_k" and "<hash>_0_v".
func testScheme(t testing.TB) *prefix.Scheme {
	t.Helper()
	return schemeOf(t, prefix.SchemeConfig{Keys: hostcache.KeyConfig{TPSize: 1}})
}

func schemeOf(t testing.TB, cfg prefix.SchemeConfig) *prefix.Scheme {
	t.Helper()
	s, err := prefix.NewScheme(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testHasher(t testing.TB, pageSize int) *prefix.Hasher {
	t.Helper()
	h, err := prefix.NewHasher(prefix.HashConfig{PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
