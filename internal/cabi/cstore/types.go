// Package cstore holds the Go declarations of the store part of the C ABI
// (cgo/include/mcgo/store.h). Package
// github.com/mooncake-go/mooncake-go/mooncake is the API.
//
// Its calls take plain slices, as the ABI does: a batch's keys are one
// byte buffer and their offsets (key i is keys[keyOffs[i]:keyOffs[i+1]],
// len(keyOffs) is the number of keys plus one), so that this package
// imports nothing of the APIs above it.
package cstore

import "strings"

// The MCGO_CAP_* bits of Capabilities (checked against the header where
// cgo is).
const (
	CapTenants           = 1 << 0
	CapSSDOffload        = 1 << 1
	CapClientHTTPServer  = 1 << 2
	CapNoFReplicas       = 1 << 3
	CapDFSReplicas       = 1 << 4
	CapSessions          = 1 << 5
	CapMultiBufferUpsert = 1 << 6
	CapSoftPinActions    = 1 << 7
	CapUnmountLocalDisk  = 1 << 8
)

// Config mirrors mcgo_store_config.
type Config struct {
	LocalHostname       string
	MetadataServer      string
	GlobalSegmentSize   uint64
	LocalBufferSize     uint64
	Protocol            string
	DeviceName          string
	MasterServerAddress string
	TenantID            string
	SSDOffloadPath      string
	SSDOffload          bool
	ClientHTTPServer    bool
	ClientHTTPPort      int32
}

// ReplicaDesc is one mcgo_replica_desc, its location copied out.
type ReplicaDesc struct {
	ID            uint64
	Kind, Status  int32
	Size, Address uint64
	FileOffset    uint64
	Location      string
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
	NoFReplicas  uint64
	DFSReplicas  uint64
	SoftPinAct   int32
	HasPinTTL    bool
	PinTTLMs     uint64
	NoFCount     uint32
	NoFSegments  []byte
	HasGroups    bool
	GroupCount   uint32
	Groups       []byte
	DataType     int32
}

// PackNames packs names as the C ABI takes a list of segment names: each
// NUL-terminated, back to back, and their count.
func PackNames(names []string) ([]byte, uint32) {
	if len(names) == 0 {
		return nil, 0
	}
	return []byte(strings.Join(names, "\x00") + "\x00"), uint32(len(names))
}

// SegmentID is mcgo_segment_id: upstream's segment UUID.
type SegmentID struct{ First, Second uint64 }

// Ranges is a CSR range list: key i's ranges are [Offsets[i], Offsets[i+1])
// of Addrs, Sizes and At (the byte offsets in the objects).
type Ranges struct {
	Addrs   []uintptr
	Sizes   []uint64
	At      []uint64
	Offsets []uint64
}

// TaskInfo is mcgo_task_info.
type TaskInfo struct {
	ID, AssignedClient SegmentID
	Type, Status       int32
	CreatedMs          int64
	UpdatedMs          int64
	Message            string
}
