// Package base compiles the parts of the embedded backend that every part
// of the C ABI shares: the identity functions of mcgo/common.h, the set of
// registered memory regions and the object-memory cache. It has no Go API;
// internal/cabi links it into default (non-native) builds.
package base
