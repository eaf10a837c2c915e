package cabi

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Why a native library was refused (LoadNative, MCGO_NATIVE_LIBRARY).
var (
	// ErrNativeLibrary: the library could not be loaded (no such file, not
	// a shared library of this machine, a missing dependency) or lacks a
	// function of the C ABI.
	ErrNativeLibrary = errors.New("native library cannot be loaded")
	// ErrNativeABI: the library implements another version of the C ABI.
	ErrNativeABI = errors.New("native library of another ABI version")
	// ErrNativeUpstream: the library was built against an upstream commit
	// this program was not tested with (third_party/mooncake/PIN).
	ErrNativeUpstream = errors.New("native library built against an upstream this program does not accept")
	// ErrBackendInUse: the process already has a store or an engine on
	// another backend.
	ErrBackendInUse = errors.New("another backend is in use in this process")
)

// EnvNativeLibrary names a libmcgo_native.so to load when the process
// first needs a backend; EnvNativeAnyUpstream=1 accepts one built against
// any upstream commit.
const (
	EnvNativeLibrary     = "MCGO_NATIVE_LIBRARY"
	EnvNativeAnyUpstream = "MCGO_NATIVE_ANY_UPSTREAM"
)

// The backend of the process: the one linked in, or a native library
// loaded at run time, chosen before the first handle is made and then
// frozen (handles of two backends cannot meet).
var sel struct {
	mu     sync.Mutex
	envErr error  // the outcome of EnvNativeLibrary, once looked at
	envSet bool   // the environment was looked at
	path   string // the library loaded, "" for the linked backend
	frozen bool   // a handle exists: no other backend now
}

// yields is whether Gate.Leave yields: the backend's calls block on other
// threads (native).
var yields atomic.Bool

func init() { yields.Store(linkedYields) }

// Select settles the backend from the environment, once: when
// EnvNativeLibrary is set and no library was loaded explicitly, it loads
// that one. It returns what loading it said (nil when nothing was asked).
// Every call that reads the backend goes through it.
func Select() error {
	sel.mu.Lock()
	defer sel.mu.Unlock()
	return selectLocked()
}

func selectLocked() error {
	if sel.envSet {
		return sel.envErr
	}
	sel.envSet = true
	if p := os.Getenv(EnvNativeLibrary); p != "" && sel.path == "" {
		sel.envErr = loadLocked(p, os.Getenv(EnvNativeAnyUpstream) == "1")
	}
	return sel.envErr
}

// freeze settles the backend for good, when a handle is about to be made.
func freeze() error {
	sel.mu.Lock()
	defer sel.mu.Unlock()
	if err := selectLocked(); err != nil {
		return err
	}
	sel.frozen = true
	return nil
}

// LoadNative makes the native library at path the process's backend, in
// place of the linked one: every later call of the C ABI goes to it. It
// must come before the first store or engine is opened (ErrBackendInUse
// after, unless it is the library already loaded). anyUpstream accepts a
// library built against an upstream commit this program was not tested
// with.
func LoadNative(path string, anyUpstream bool) error {
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		return fmt.Errorf("%w: path %q", ErrNativeLibrary, path)
	}
	sel.mu.Lock()
	defer sel.mu.Unlock()
	sel.envSet = true // an explicit choice wins over the environment
	sel.envErr = nil
	if sel.frozen || sel.path != "" {
		if path == sel.path {
			return nil
		}
		if sel.frozen {
			return ErrBackendInUse
		}
	}
	return loadLocked(path, anyUpstream)
}

// NativePath is the library LoadNative (or the environment) loaded, "" for
// the backend linked into the program.
func NativePath() string {
	sel.mu.Lock()
	defer sel.mu.Unlock()
	return sel.path
}
