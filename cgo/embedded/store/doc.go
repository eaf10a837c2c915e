// Package store compiles the embedded backend of the store part of the C
// ABI (mcgo/store.h): an in-process cluster with Mooncake's semantics. It
// has no Go API; internal/cabi/cstore links it into default (non-native)
// builds.
package store
