// Package transfer compiles the embedded backend of the transfer-engine
// part of the C ABI (mcgo/transfer.h): in-process engines that meet through
// their metadata string and move bytes on worker threads. It has no Go API;
// internal/cabi/ctransfer links it into default (non-native) builds.
package transfer
