//go:build cgo

package mooncake_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
)

// TestLoadNativeOnceAStoreIsOpen: the process's backend is settled by its
// first store: another library is refused (ErrBackendInUse), a missing one
// named in a Config fails that Open with ErrNativeLibrary, and the store
// keeps working.
func TestLoadNativeOnceAStoreIsOpen(t *testing.T) {
	c := mooncaketest.NewCluster(t)
	st := c.Open(t)
	missing := filepath.Join(t.TempDir(), "libmcgo_native.so")
	if _, err := mooncake.LoadNative(missing, mooncake.NativeOptions{}); !errors.Is(err, mooncake.ErrBackendInUse) {
		t.Errorf("LoadNative after Open: %v, want ErrBackendInUse", err)
	}
	cfg := c.Config()
	cfg.NativeLibrary = missing
	if s2, err := mooncake.Open(cfg); err == nil || !errors.Is(err, mooncake.ErrBackendInUse) {
		if s2 != nil {
			s2.Close()
		}
		t.Errorf("Open with another NativeLibrary: %v, want ErrBackendInUse", err)
	}
	if _, err := transfer.Open(transfer.Config{MetadataServer: "P2PHANDSHAKE", LocalServerName: "127.0.0.1", NativeLibrary: missing}); !errors.Is(err, mooncake.ErrBackendInUse) {
		t.Errorf("transfer.Open with another NativeLibrary: %v, want ErrBackendInUse", err)
	}
	if lib := mooncake.Backend().Library; lib != "" {
		cfg.NativeLibrary = lib // the library loaded already: accepted
		s3, err := mooncake.Open(cfg)
		if err != nil {
			t.Errorf("Open naming the loaded library: %v", err)
		} else {
			s3.Close()
		}
	}
	if err := st.Put(mooncaketest.Key(t, "after"), []byte("x")); err != nil {
		t.Errorf("the store after the refusals: %v", err)
	}
}
