package cabi

import "unsafe"

// Pointer helpers for the C calls of the subpackages (each casts to its own
// C types). They return nil for empty input, so an empty slice is never
// indexed and C sees NULL; pointers to Go memory are valid for the call
// only, and no function of the ABI keeps one.

// StringPtr points at the bytes of s.
func StringPtr(s string) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.StringData(s))
}

// SlicePtr points at the first element of s.
func SlicePtr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(s))
}

// TrimNUL returns the bytes of b up to its first NUL, as a string.
func TrimNUL(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
