package mcgo

// ABIVersion is the version of cgo/mcgo.h this Go code was written for. It
// must equal MCGO_ABI_VERSION in the header and what the linked engine
// reports; Check compares them at run time, which also catches a stale object
// in the Go build cache (cgo does not track headers outside a package's own
// directory).
const ABIVersion = 2

// CodeNoCgo is returned by every call in a build without cgo. It is
// Mooncake's NOT_SUPPORTED (-1012).
const CodeNoCgo = -1012

// Config mirrors mcgo_config.
type Config struct {
	LocalHostname       string
	MetadataServer      string
	GlobalSegmentSize   uint64
	LocalBufferSize     uint64
	Protocol            string
	DeviceName          string
	MasterServerAddress string
}

// Replicate mirrors mcgo_replicate_config. Segments holds SegmentCount
// NUL-terminated names back to back.
type Replicate struct {
	ReplicaNum   uint64
	SoftPin      bool
	HardPin      bool
	SameNode     bool
	SegmentCount uint32
	Segments     []byte
}
