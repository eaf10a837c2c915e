package hostcache

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error returned by this package that falls in one of
// these classes matches it with errors.Is.
var (
	// ErrUnsupportedLayout: the pool kind does not support the layout for the
	// requested operation (construction, page meta, split heads, storage).
	ErrUnsupportedLayout = errors.New("hostcache: unsupported layout")
	// ErrInvalidConfig: a pool geometry, backend option or store config is invalid.
	ErrInvalidConfig = errors.New("hostcache: invalid configuration")
	// ErrInvalidIndices: host indices are empty, not whole pages, misaligned or
	// out of the pool's range, or do not match the number of keys.
	ErrInvalidIndices = errors.New("hostcache: invalid host indices")
	// ErrPack: a flat meta list cannot be grouped under the given keys.
	ErrPack = errors.New("hostcache: cannot pack multi-buffer meta")
	// ErrNoBuffer: the pool owns no memory (logical anchor or dummy pool).
	ErrNoBuffer = errors.New("hostcache: pool has no buffer")
	// ErrUnregisteredPool: a v2 transfer names a pool that was not registered.
	ErrUnregisteredPool = errors.New("hostcache: pool not registered")
	// ErrUnsupportedPool: the pool name or kind has no key scheme here.
	ErrUnsupportedPool = errors.New("hostcache: unsupported pool")
	// ErrOverlap: a buffer overlaps one that is already registered.
	ErrOverlap = errors.New("hostcache: buffer overlaps a registered buffer")
	// ErrResultCount: the store returned a different number of results than keys.
	ErrResultCount = errors.New("hostcache: store returned wrong result count")
	// ErrStore: a store call failed as a whole.
	ErrStore = errors.New("hostcache: store call failed")
	// ErrNotRegistered: an I/O call was made before RegisterPool.
	ErrNotRegistered = errors.New("hostcache: no host pool registered")
	// ErrClosed: the backend was closed.
	ErrClosed = errors.New("hostcache: backend closed")
	// ErrRegister: a pool buffer could not be registered with the store
	// (a *RegisterError carries the buffer and the cause).
	ErrRegister = errors.New("hostcache: buffer registration failed")
)

// LayoutError reports an unsupported pool kind × layout pair.
type LayoutError struct {
	Pool   string // pool description, e.g. "mla(L=61,C=576,bf16,P=64)"
	Kind   Kind
	Layout Layout
	Op     string // "construct", "page meta", "split-heads meta", "storage"
	Reason string // optional detail
}

func (e *LayoutError) Error() string {
	msg := fmt.Sprintf("hostcache: %s: layout %s is not supported for %s pool %s", e.Op, e.Layout, e.Kind, e.Pool)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Is makes errors.Is(err, ErrUnsupportedLayout) true.
func (e *LayoutError) Is(target error) bool { return target == ErrUnsupportedLayout }

// ConfigError reports an invalid pool geometry, option or configuration value.
type ConfigError struct {
	What   string // pool or config section
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("hostcache: %s: %s", e.What, e.Reason)
	}
	return fmt.Sprintf("hostcache: %s: %s: %s", e.What, e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// IndexError reports bad host indices.
type IndexError struct {
	Pool   string
	Reason string
	Page   int   // page number within the batch, -1 if not page-specific
	Index  int64 // offending token index, if any
	Count  int   // len(indices) or keys, when relevant
}

func (e *IndexError) Error() string {
	if e.Page >= 0 {
		return fmt.Sprintf("hostcache: pool %s: page %d (token index %d): %s", e.Pool, e.Page, e.Index, e.Reason)
	}
	return fmt.Sprintf("hostcache: pool %s: %s", e.Pool, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidIndices) true.
func (e *IndexError) Is(target error) bool { return target == ErrInvalidIndices }

// PackError reports why a flat meta list could not be grouped under keys
// (SGLang _pack_multi_buffer_meta, with the edge cases it lets through refused).
type PackError struct {
	Keys, Ptrs, Sizes int
	Reason            string
}

func (e *PackError) Error() string {
	return fmt.Sprintf("hostcache: pack multi-buffer meta (%d keys, %d pointers, %d sizes): %s", e.Keys, e.Ptrs, e.Sizes, e.Reason)
}

// Is makes errors.Is(err, ErrPack) true.
func (e *PackError) Is(target error) bool { return target == ErrPack }

// ResultCountError reports a store call that returned the wrong number of results.
type ResultCountError struct {
	Op        string
	Want, Got int
}

func (e *ResultCountError) Error() string {
	return fmt.Sprintf("hostcache: %s returned %d results for %d keys", e.Op, e.Got, e.Want)
}

// Is makes errors.Is(err, ErrResultCount) true.
func (e *ResultCountError) Is(target error) bool { return target == ErrResultCount }

// StoreError wraps an error returned by a Store call as a whole.
type StoreError struct {
	Op   string
	Keys int
	Err  error
}

func (e *StoreError) Error() string {
	if e.Keys == 0 {
		return fmt.Sprintf("hostcache: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("hostcache: %s (%d keys): %v", e.Op, e.Keys, e.Err)
}

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrStore) true.
func (e *StoreError) Is(target error) bool { return target == ErrStore }

// RegisterError reports a failed or refused buffer registration.
type RegisterError struct {
	Pool   string
	Buffer string
	Addr   uintptr
	Size   uint64
	Err    error
}

func (e *RegisterError) Error() string {
	return fmt.Sprintf("hostcache: register buffer %s of pool %s [%#x, +%d): %v", e.Buffer, e.Pool, e.Addr, e.Size, e.Err)
}

// Unwrap returns the cause (ErrOverlap, or the store's error).
func (e *RegisterError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRegister) true.
func (e *RegisterError) Is(target error) bool { return target == ErrRegister }

// PoolError reports a pool-level problem in the backend (unregistered or
// unsupported pool name, no buffer, ...).
type PoolError struct {
	Name   PoolName
	Reason string
	Err    error // sentinel: ErrUnregisteredPool, ErrUnsupportedPool, ErrNoBuffer, ...
}

func (e *PoolError) Error() string {
	return fmt.Sprintf("hostcache: pool %q: %s", string(e.Name), e.Reason)
}

// Unwrap returns the sentinel.
func (e *PoolError) Unwrap() error { return e.Err }
