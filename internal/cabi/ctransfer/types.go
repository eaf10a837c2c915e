// Package ctransfer holds the Go declarations of the transfer-engine part
// of the C ABI (cgo/include/mcgo/transfer.h). Package
// github.com/mooncake-go/mooncake-go/mooncake/transfer is the API.
package ctransfer

// Config mirrors mcgo_te_config.
type Config struct {
	MetadataServer  string
	LocalServerName string
	Host            string
	RPCPort         uint32
}
