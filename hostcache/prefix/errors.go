package prefix

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error of this package matches one with errors.Is.
var (
	// ErrInvalidConfig: a hashing, scheme or lookup setting is invalid.
	ErrInvalidConfig = errors.New("prefix: invalid configuration")
	// ErrInvalidDigest: a page hash or prior is not a 32-byte digest.
	ErrInvalidDigest = errors.New("prefix: invalid digest")
	// ErrTokenRange: a token id is outside what SGLang hashes.
	ErrTokenRange = errors.New("prefix: token id out of range")
	// ErrLookup: the existence check failed.
	ErrLookup = errors.New("prefix: lookup failed")
)

// ConfigError reports an invalid setting.
type ConfigError struct {
	What   string // "hasher", "scheme", "lookup"
	Field  string
	Reason string
	Err    error // the cause, when another package refused it
}

func (e *ConfigError) Error() string {
	msg := fmt.Sprintf("prefix: %s: %s: %s", e.What, e.Field, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// DigestError reports a string that is not a digest.
type DigestError struct {
	Input  string
	Reason string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("prefix: %q is not a 32-byte digest: %s", e.Input, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidDigest) true.
func (e *DigestError) Is(target error) bool { return target == ErrInvalidDigest }

// TokenError reports a token id SGLang refuses to hash: below 0, or above
// Max (2^32-1; with HashConfig.WideTokens, 2^63-1).
type TokenError struct {
	Index int // position in the tokens given
	Value int64
	Max   uint64
}

func (e *TokenError) Error() string {
	return fmt.Sprintf("prefix: token %d is %d, outside [0, %d]", e.Index, e.Value, e.Max)
}

// Is makes errors.Is(err, ErrTokenRange) true.
func (e *TokenError) Is(target error) bool { return target == ErrTokenRange }

// LookupError reports a failed existence check: the call failed as a whole
// (Err is the store's error, Index -1), it returned the wrong number of
// results, or the check of the key where the prefix ended failed (Index is
// that key's position in the batch and Code its result).
type LookupError struct {
	Keys  int // keys in the batch
	Index int
	Code  int64
	Err   error
}

func (e *LookupError) Error() string {
	switch {
	case e.Index >= 0 && e.Err != nil:
		return fmt.Sprintf("prefix: lookup of %d keys: key %d failed with code %d: %v", e.Keys, e.Index, e.Code, e.Err)
	case e.Index >= 0:
		return fmt.Sprintf("prefix: lookup of %d keys: key %d failed with code %d", e.Keys, e.Index, e.Code)
	default:
		return fmt.Sprintf("prefix: lookup of %d keys: %v", e.Keys, e.Err)
	}
}

// Is makes errors.Is(err, ErrLookup) true.
func (e *LookupError) Is(target error) bool { return target == ErrLookup }

// Unwrap returns the store's error, so that errors.Is matches its codes too.
func (e *LookupError) Unwrap() error { return e.Err }

// errNoResults: an Exister returned neither results nor an error.
var errNoResults = errors.New("no results and no error")

// resultCountError: an Exister returned a result count other than the keys'.
type resultCountError struct{ got, want int }

func (e *resultCountError) Error() string {
	return fmt.Sprintf("%d results for %d keys", e.got, e.want)
}
