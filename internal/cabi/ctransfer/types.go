// Package ctransfer holds the Go declarations of the transfer-engine part
// of the C ABI (cgo/include/mcgo/transfer.h). Package
// github.com/mooncake-go/mooncake-go/mooncake/transfer is the API.
package ctransfer

import "github.com/mooncake-go/mooncake-go/internal/codes"

// CodeNoCgo is what every call returns in a build without cgo: the engine
// code space's NOT_IMPLEMENTED.
const CodeNoCgo = codes.EngineNotImplemented

// Config mirrors mcgo_te_config.
type Config struct {
	MetadataServer  string
	LocalServerName string
	Host            string
	RPCPort         uint32
}

// EngineOf returns the C engine behind a *transfer.Engine, admitted through
// its gate (release must be called), or ok false when e is not an open
// engine. Package transfer sets it, so that package mooncake can open a
// store on an engine without the engine's handle being public API.
var EngineOf func(e any) (h Engine, release func(), ok bool)
