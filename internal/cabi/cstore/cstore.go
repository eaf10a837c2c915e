//go:build cgo

package cstore

/*
#cgo CFLAGS: -I${SRCDIR}/../../../cgo/include -I${SRCDIR}/..
#include <stdlib.h>
#include "dispatch_gen.h" // the ABI, called through the dispatch table

#cgo noescape mcgo_store_setup_on_engine
#cgo nocallback mcgo_store_setup_on_engine

// None of these functions keeps a pointer or calls back into Go.
#cgo noescape mcgo_store_setup
#cgo nocallback mcgo_store_setup
#cgo noescape mcgo_store_hostname
#cgo nocallback mcgo_store_hostname
#cgo noescape mcgo_store_put
#cgo nocallback mcgo_store_put
#cgo noescape mcgo_store_upsert
#cgo nocallback mcgo_store_upsert
#cgo noescape mcgo_store_get_begin
#cgo nocallback mcgo_store_get_begin
#cgo noescape mcgo_store_get_finish
#cgo nocallback mcgo_store_get_finish
#cgo noescape mcgo_store_put_from
#cgo nocallback mcgo_store_put_from
#cgo noescape mcgo_store_upsert_from
#cgo nocallback mcgo_store_upsert_from
#cgo noescape mcgo_store_get_into
#cgo nocallback mcgo_store_get_into
#cgo noescape mcgo_store_batch_put_from
#cgo nocallback mcgo_store_batch_put_from
#cgo noescape mcgo_store_batch_upsert_from
#cgo nocallback mcgo_store_batch_upsert_from
#cgo noescape mcgo_store_batch_get_into
#cgo nocallback mcgo_store_batch_get_into
#cgo noescape mcgo_store_batch_put_from_multi_buffers
#cgo nocallback mcgo_store_batch_put_from_multi_buffers
#cgo noescape mcgo_store_batch_upsert_from_multi_buffers
#cgo nocallback mcgo_store_batch_upsert_from_multi_buffers
#cgo noescape mcgo_store_batch_get_into_multi_buffers
#cgo nocallback mcgo_store_batch_get_into_multi_buffers
#cgo noescape mcgo_store_is_exist
#cgo nocallback mcgo_store_is_exist
#cgo noescape mcgo_store_batch_is_exist
#cgo nocallback mcgo_store_batch_is_exist
#cgo noescape mcgo_store_get_size
#cgo nocallback mcgo_store_get_size
#cgo noescape mcgo_store_remove
#cgo nocallback mcgo_store_remove
#cgo noescape mcgo_store_put_parts
#cgo nocallback mcgo_store_put_parts
#cgo noescape mcgo_store_upsert_parts
#cgo nocallback mcgo_store_upsert_parts
#cgo noescape mcgo_store_put_batch
#cgo nocallback mcgo_store_put_batch
#cgo noescape mcgo_store_upsert_batch
#cgo nocallback mcgo_store_upsert_batch
#cgo noescape mcgo_store_batch_get_replica_desc
#cgo nocallback mcgo_store_batch_get_replica_desc
#cgo noescape mcgo_store_batch_replica_clear
#cgo nocallback mcgo_store_batch_replica_clear
#cgo noescape mcgo_store_batch_remove
#cgo nocallback mcgo_store_batch_remove
#cgo noescape mcgo_store_remove_by_regex
#cgo nocallback mcgo_store_remove_by_regex
#cgo noescape mcgo_store_batch_get_session_start
#cgo nocallback mcgo_store_batch_get_session_start
#cgo noescape mcgo_store_batch_get_into_multi_buffer_ranges
#cgo nocallback mcgo_store_batch_get_into_multi_buffer_ranges
#cgo noescape mcgo_store_batch_get_session_end
#cgo nocallback mcgo_store_batch_get_session_end
#cgo noescape mcgo_store_batch_put_session_start
#cgo nocallback mcgo_store_batch_put_session_start
#cgo noescape mcgo_store_batch_put_from_multi_buffer_ranges
#cgo nocallback mcgo_store_batch_put_from_multi_buffer_ranges
#cgo noescape mcgo_store_batch_put_session_end
#cgo nocallback mcgo_store_batch_put_session_end
#cgo noescape mcgo_store_batch_put_session_revoke
#cgo nocallback mcgo_store_batch_put_session_revoke
#cgo noescape mcgo_store_create_copy_task
#cgo nocallback mcgo_store_create_copy_task
#cgo noescape mcgo_store_create_move_task
#cgo nocallback mcgo_store_create_move_task
#cgo noescape mcgo_store_query_task
#cgo nocallback mcgo_store_query_task
#cgo noescape mcgo_store_get_into_ranges
#cgo nocallback mcgo_store_get_into_ranges
#cgo noescape mcgo_store_unmount_local_disk_segment
#cgo nocallback mcgo_store_unmount_local_disk_segment
#cgo noescape mcgo_store_offload_rpc_read_count
#cgo nocallback mcgo_store_offload_rpc_read_count
#cgo noescape mcgo_store_allocate_and_mount_segment
#cgo nocallback mcgo_store_allocate_and_mount_segment
#cgo noescape mcgo_store_mount_segment
#cgo nocallback mcgo_store_mount_segment
#cgo noescape mcgo_store_unmount_segment
#cgo nocallback mcgo_store_unmount_segment
#cgo noescape mcgo_store_unmount_and_free_segment
#cgo nocallback mcgo_store_unmount_and_free_segment
*/
import "C"

import (
	"unsafe"

	"github.com/mooncake-go/mooncake-go/internal/cabi"
)

// Client is an opaque handle to one C-side store client. The zero value is
// not usable; get one from Create.
type Client struct {
	p *C.mcgo_store
}

// Create allocates an unconnected client.
func Create() (Client, int32) {
	var p *C.mcgo_store
	rc := int32(C.mcgo_store_create(&p))
	return Client{p: p}, rc
}

// Destroy frees the client. The caller guarantees no concurrent call.
func (c Client) Destroy() { C.mcgo_store_destroy(c.p) }

// Setup connects the client. On failure it returns the code and the
// engine's message.
func (c Client) Setup(cfg *Config) (int32, string) { return c.setup(cfg, nil) }

func (c Client) setup(cfg *Config, engine unsafe.Pointer) (int32, string) {
	cs := newCStrings(cfg.LocalHostname, cfg.MetadataServer, cfg.Protocol, cfg.DeviceName, cfg.MasterServerAddress,
		cfg.TenantID, cfg.SSDOffloadPath)
	defer cs.free()
	cc := C.mcgo_store_config{
		local_hostname:            cs[0],
		metadata_server:           cs[1],
		global_segment_size:       C.uint64_t(cfg.GlobalSegmentSize),
		local_buffer_size:         C.uint64_t(cfg.LocalBufferSize),
		protocol:                  cs[2],
		device_name:               cs[3],
		master_server_address:     cs[4],
		tenant_id:                 cs[5],
		ssd_offload_path:          cs[6],
		enable_ssd_offload:        cbool(cfg.SSDOffload),
		enable_client_http_server: cbool(cfg.ClientHTTPServer),
		client_http_port:          C.int32_t(cfg.ClientHTTPPort),
	}
	var msg [512]byte
	var rc int32
	if engine != nil {
		rc = int32(C.mcgo_store_setup_on_engine(c.p, &cc, (*C.mcgo_te)(engine), (*C.char)(unsafe.Pointer(&msg[0])), C.size_t(len(msg))))
	} else {
		rc = int32(C.mcgo_store_setup(c.p, &cc, (*C.char)(unsafe.Pointer(&msg[0])), C.size_t(len(msg))))
	}
	if rc == 0 {
		return 0, ""
	}
	return rc, cabi.TrimNUL(msg[:])
}

// SetupOnEngine is Setup on an existing transfer engine (its C handle).
func (c Client) SetupOnEngine(cfg *Config, engine unsafe.Pointer) (int32, string) {
	return c.setup(cfg, engine)
}

// SetupDummy sets the client up as a dummy of the real client at server
// (mcgo_store_setup_dummy). On failure it returns the code and the
// engine's message.
func (c Client) SetupDummy(memPoolSize, localBufferSize uint64, server string) (int32, string) {
	cs := newCStrings(server)
	defer cs.free()
	var msg [512]byte
	rc := int32(C.mcgo_store_setup_dummy(c.p, C.uint64_t(memPoolSize), C.uint64_t(localBufferSize), cs[0],
		(*C.char)(unsafe.Pointer(&msg[0])), C.size_t(len(msg))))
	if rc == 0 {
		return 0, ""
	}
	return rc, cabi.TrimNUL(msg[:])
}

// AllocFromMemPool allocates size bytes of a dummy's shared memory
// (mcgo_store_alloc_from_mem_pool) and returns it. The C call writes the
// address straight into an unsafe.Pointer: the memory is not Go's, and no
// uintptr-to-pointer conversion is needed.
func (c Client) AllocFromMemPool(size uint64) (unsafe.Pointer, int32) {
	var p unsafe.Pointer
	rc := int32(C.mcgo_store_alloc_from_mem_pool(c.p, C.uint64_t(size), (*C.uintptr_t)(unsafe.Pointer(&p))))
	return p, rc
}

// Capabilities returns mcgo_store_capabilities: the Cap* bits.
func Capabilities() uint32 {
	_ = cabi.Select()
	return uint32(C.mcgo_store_capabilities())
}

// The Cap* bits are the header's: an array of negative length does not
// compile.
var (
	_ [CapTenants - C.MCGO_CAP_TENANTS]struct{}
	_ [C.MCGO_CAP_TENANTS - CapTenants]struct{}
	_ [CapSSDOffload - C.MCGO_CAP_SSD_OFFLOAD]struct{}
	_ [C.MCGO_CAP_SSD_OFFLOAD - CapSSDOffload]struct{}
	_ [CapClientHTTPServer - C.MCGO_CAP_CLIENT_HTTP_SERVER]struct{}
	_ [C.MCGO_CAP_CLIENT_HTTP_SERVER - CapClientHTTPServer]struct{}
	_ [CapNoFReplicas - C.MCGO_CAP_NOF_REPLICAS]struct{}
	_ [C.MCGO_CAP_NOF_REPLICAS - CapNoFReplicas]struct{}
	_ [CapDFSReplicas - C.MCGO_CAP_DFS_REPLICAS]struct{}
	_ [C.MCGO_CAP_DFS_REPLICAS - CapDFSReplicas]struct{}
	_ [CapSessions - C.MCGO_CAP_SESSIONS]struct{}
	_ [C.MCGO_CAP_SESSIONS - CapSessions]struct{}
	_ [CapMultiBufferUpsert - C.MCGO_CAP_MULTI_BUFFER_UPSERT]struct{}
	_ [C.MCGO_CAP_MULTI_BUFFER_UPSERT - CapMultiBufferUpsert]struct{}
	_ [CapSoftPinActions - C.MCGO_CAP_SOFT_PIN_ACTIONS]struct{}
	_ [C.MCGO_CAP_SOFT_PIN_ACTIONS - CapSoftPinActions]struct{}
	_ [CapUnmountLocalDisk - C.MCGO_CAP_UNMOUNT_LOCAL_DISK]struct{}
	_ [C.MCGO_CAP_UNMOUNT_LOCAL_DISK - CapUnmountLocalDisk]struct{}
)

// HealthCheck returns 0 when the client is set up and its master answers.
func (c Client) HealthCheck() int32 { return int32(C.mcgo_store_health_check(c.p)) }

// Hostname returns the client's segment name.
func (c Client) Hostname() (string, int32) {
	buf := make([]byte, 256)
	for {
		var n C.size_t
		rc := int32(C.mcgo_store_hostname(c.p, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n))
		if rc != 0 {
			return "", rc
		}
		if int(n) < len(buf) {
			return string(buf[:n]), 0
		}
		buf = make([]byte, int(n)+1)
	}
}

// RegisterBuffer registers [addr, addr+size).
func (c Client) RegisterBuffer(addr uintptr, size uint64) int32 {
	return int32(C.mcgo_store_register_buffer(c.p, C.uintptr_t(addr), C.uint64_t(size)))
}

// UnregisterBuffer unregisters the region starting at addr.
func (c Client) UnregisterBuffer(addr uintptr) int32 {
	return int32(C.mcgo_store_unregister_buffer(c.p, C.uintptr_t(addr)))
}

// Put stores a copy of value under key (write-once).
func (c Client) Put(key string, value []byte, rc *Replicate) int32 {
	return int32(C.mcgo_store_put(c.p, strPtr(key), C.size_t(len(key)), bytesPtr(value), C.uint64_t(len(value)), rc.c()))
}

// Upsert stores a copy of value under key, replacing an existing object.
func (c Client) Upsert(key string, value []byte, rc *Replicate) int32 {
	return int32(C.mcgo_store_upsert(c.p, strPtr(key), C.size_t(len(key)), bytesPtr(value), C.uint64_t(len(value)), rc.c()))
}

// GetBegin reads the object into memory the library holds and returns its
// size (or a negative code) and a handle that GetFinish must release.
func (c Client) GetBegin(key string) (size int64, handle uintptr) {
	var h C.uintptr_t
	r := int64(C.mcgo_store_get_begin(c.p, strPtr(key), C.size_t(len(key)), &h))
	return r, uintptr(h)
}

// GetFinish copies the object held by handle into dst (nil to only release
// it) and releases the handle.
func GetFinish(handle uintptr, dst []byte) int32 {
	return int32(C.mcgo_store_get_finish(C.uintptr_t(handle), bytesPtr(dst), C.uint64_t(len(dst))))
}

// PutFrom stores size bytes at addr (registered memory) under key.
func (c Client) PutFrom(key string, addr uintptr, size uint64, rc *Replicate) int32 {
	return int32(C.mcgo_store_put_from(c.p, strPtr(key), C.size_t(len(key)), C.uintptr_t(addr), C.uint64_t(size), rc.c()))
}

// UpsertFrom is PutFrom that replaces an existing object.
func (c Client) UpsertFrom(key string, addr uintptr, size uint64, rc *Replicate) int32 {
	return int32(C.mcgo_store_upsert_from(c.p, strPtr(key), C.size_t(len(key)), C.uintptr_t(addr), C.uint64_t(size), rc.c()))
}

// GetInto reads the object into [addr, addr+size) and returns its size.
func (c Client) GetInto(key string, addr uintptr, size uint64) int64 {
	return int64(C.mcgo_store_get_into(c.p, strPtr(key), C.size_t(len(key)), C.uintptr_t(addr), C.uint64_t(size)))
}

// BatchPutFrom fills results[i] with 0 or a negative code for each key.
func (c Client) BatchPutFrom(keys []byte, keyOffs []uint64, addrs []uintptr, sizes []uint64, rc *Replicate, results []int64) int32 {
	return int32(C.mcgo_store_batch_put_from(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(addrs), u64Ptr(sizes), rc.c(), i64Ptr(results)))
}

// BatchUpsertFrom is BatchPutFrom that replaces existing objects.
func (c Client) BatchUpsertFrom(keys []byte, keyOffs []uint64, addrs []uintptr, sizes []uint64, rc *Replicate, results []int64) int32 {
	return int32(C.mcgo_store_batch_upsert_from(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(addrs), u64Ptr(sizes), rc.c(), i64Ptr(results)))
}

// BatchGetInto fills results[i] with the bytes read or a negative code.
func (c Client) BatchGetInto(keys []byte, keyOffs []uint64, addrs []uintptr, sizes []uint64, results []int64) int32 {
	return int32(C.mcgo_store_batch_get_into(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(addrs), u64Ptr(sizes), i64Ptr(results)))
}

// BatchPutFromMultiBuffers stores, for each key, the concatenation of its
// CSR buffer range.
func (c Client) BatchPutFromMultiBuffers(keys []byte, keyOffs []uint64, addrs []uintptr, sizes []uint64, bufOffsets []uint64, rc *Replicate, results []int64) int32 {
	return int32(C.mcgo_store_batch_put_from_multi_buffers(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(addrs), u64Ptr(sizes), offsPtr(bufOffsets), rc.c(), i64Ptr(results)))
}

// BatchUpsertFromMultiBuffers is BatchPutFromMultiBuffers that replaces
// existing objects.
func (c Client) BatchUpsertFromMultiBuffers(keys []byte, keyOffs []uint64, addrs []uintptr, sizes []uint64, bufOffsets []uint64, rc *Replicate, results []int64) int32 {
	return int32(C.mcgo_store_batch_upsert_from_multi_buffers(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(addrs), u64Ptr(sizes), offsPtr(bufOffsets), rc.c(), i64Ptr(results)))
}

// BatchGetIntoMultiBuffers scatters each object over its CSR buffer range.
func (c Client) BatchGetIntoMultiBuffers(keys []byte, keyOffs []uint64, addrs []uintptr, sizes []uint64, bufOffsets []uint64, preferSameNode bool, results []int64) int32 {
	return int32(C.mcgo_store_batch_get_into_multi_buffers(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(addrs), u64Ptr(sizes), offsPtr(bufOffsets), cbool(preferSameNode), i64Ptr(results)))
}

// IsExist returns 1, 0 or a negative code.
func (c Client) IsExist(key string) int32 {
	return int32(C.mcgo_store_is_exist(c.p, strPtr(key), C.size_t(len(key))))
}

// BatchIsExist fills results[i] with 1, 0 or a negative code.
func (c Client) BatchIsExist(keys []byte, keyOffs []uint64, results []int64) int32 {
	return int32(C.mcgo_store_batch_is_exist(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs), i64Ptr(results)))
}

// GetSize returns the object size or a negative code.
func (c Client) GetSize(key string) int64 {
	return int64(C.mcgo_store_get_size(c.p, strPtr(key), C.size_t(len(key))))
}

// Remove deletes one object.
func (c Client) Remove(key string, force bool) int32 {
	return int32(C.mcgo_store_remove(c.p, strPtr(key), C.size_t(len(key)), cbool(force)))
}

// PutParts stores the concatenation of the parts at datas (their sizes in
// sizes; memory the caller keeps pinned) under key.
func (c Client) PutParts(key string, datas []uintptr, sizes []uint64, rc *Replicate, upsert bool) int32 {
	k, kl := strPtr(key), C.size_t(len(key))
	d, sz, n := addrsPtr(datas), u64Ptr(sizes), C.size_t(len(datas))
	if upsert {
		return int32(C.mcgo_store_upsert_parts(c.p, k, kl, d, sz, n, rc.c()))
	}
	return int32(C.mcgo_store_put_parts(c.p, k, kl, d, sz, n, rc.c()))
}

// PutBatch stores sizes[i] bytes at datas[i] (memory the caller keeps
// pinned) under key i, copying; one code for the batch.
func (c Client) PutBatch(keys []byte, keyOffs []uint64, datas []uintptr, sizes []uint64, rc *Replicate, upsert bool) int32 {
	kp, ko, n := keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs)
	d, sz := addrsPtr(datas), u64Ptr(sizes)
	if upsert {
		return int32(C.mcgo_store_upsert_batch(c.p, kp, ko, n, d, sz, rc.c()))
	}
	return int32(C.mcgo_store_put_batch(c.p, kp, ko, n, d, sz, rc.c()))
}

// BatchGetReplicaDesc fills results[i] with key i's replica count or a
// negative code and returns the replicas in key order.
func (c Client) BatchGetReplicaDesc(keys []byte, keyOffs []uint64, results []int64) ([]ReplicaDesc, int32) {
	n := int(nKeys(keyOffs))
	descs := make([]C.mcgo_replica_desc, max(2*n, 4))
	names := make([]byte, max(64*n, 256))
	for {
		var needD, needN C.size_t
		rc := int32(C.mcgo_store_batch_get_replica_desc(c.p, keysPtr(keys), offsPtr(keyOffs), C.size_t(n),
			(*C.mcgo_replica_desc)(unsafe.Pointer(unsafe.SliceData(descs))), C.size_t(len(descs)),
			(*C.char)(bytesPtr(names)), C.size_t(len(names)), &needD, &needN, i64Ptr(results)))
		if rc == codeBufferOverflow && (int(needD) > len(descs) || int(needN) > len(names)) {
			descs = make([]C.mcgo_replica_desc, max(int(needD), len(descs)))
			names = make([]byte, max(int(needN), len(names)))
			continue
		}
		if rc != 0 {
			return nil, rc
		}
		out := make([]ReplicaDesc, int(needD))
		for i := range out {
			d := &descs[i]
			out[i] = ReplicaDesc{
				ID: uint64(d.id), Kind: int32(d.kind), Status: int32(d.status), Size: uint64(d.size),
				Address: uint64(d.address), FileOffset: uint64(d.file_offset),
				Location: string(names[d.location_offset : d.location_offset+d.location_len]),
			}
		}
		return out, 0
	}
}

// codeBufferOverflow is MCGO_BUFFER_OVERFLOW.
const codeBufferOverflow = int32(C.MCGO_BUFFER_OVERFLOW)

// BatchReplicaClear clears the keys' replicas on segment ("" = all):
// results[i] 1 cleared, 0 skipped.
func (c Client) BatchReplicaClear(keys []byte, keyOffs []uint64, segment string, results []int64) int32 {
	return int32(C.mcgo_store_batch_replica_clear(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		strPtr(segment), C.size_t(len(segment)), i64Ptr(results)))
}

// BatchRemove deletes each key, filling results[i] with 0 or a negative
// code.
func (c Client) BatchRemove(keys []byte, keyOffs []uint64, force bool, results []int64) int32 {
	return int32(C.mcgo_store_batch_remove(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs), cbool(force), i64Ptr(results)))
}

// RemoveByRegex deletes every matching object and returns the count.
func (c Client) RemoveByRegex(pattern string, force bool) int64 {
	return int64(C.mcgo_store_remove_by_regex(c.p, strPtr(pattern), C.size_t(len(pattern)), cbool(force)))
}

// RemoveAll deletes every object and returns the count.
func (c Client) RemoveAll(force bool) int64 {
	return int64(C.mcgo_store_remove_all(c.p, cbool(force)))
}

func (rc *Replicate) c() C.mcgo_replicate_config {
	if rc == nil {
		return C.mcgo_replicate_config{replica_num: 1}
	}
	cfg := C.mcgo_replicate_config{
		replica_num:               C.uint64_t(rc.ReplicaNum),
		with_soft_pin:             cbool(rc.SoftPin),
		with_hard_pin:             cbool(rc.HardPin),
		prefer_alloc_in_same_node: cbool(rc.SameNode),
	}
	if rc.SegmentCount > 0 && len(rc.Segments) > 0 {
		cfg.preferred_segment_count = C.uint32_t(rc.SegmentCount)
		cfg.preferred_segments = (*C.char)(unsafe.Pointer(unsafe.SliceData(rc.Segments)))
		cfg.preferred_segments_len = C.uint64_t(len(rc.Segments))
	}
	cfg.nof_replica_num = C.uint64_t(rc.NoFReplicas)
	cfg.dfs_replica_num = C.uint64_t(rc.DFSReplicas)
	cfg.soft_pin_action = C.int32_t(rc.SoftPinAct)
	cfg.has_soft_pin_ttl = cbool(rc.HasPinTTL)
	cfg.soft_pin_ttl_ms = C.uint64_t(rc.PinTTLMs)
	if rc.NoFCount > 0 && len(rc.NoFSegments) > 0 {
		cfg.preferred_nof_segment_count = C.uint32_t(rc.NoFCount)
		cfg.preferred_nof_segments = (*C.char)(unsafe.Pointer(unsafe.SliceData(rc.NoFSegments)))
		cfg.preferred_nof_segments_len = C.uint64_t(len(rc.NoFSegments))
	}
	if rc.HasGroups {
		cfg.has_group_ids = 1
		cfg.group_id_count = C.uint32_t(rc.GroupCount)
		if len(rc.Groups) > 0 {
			cfg.group_ids = (*C.char)(unsafe.Pointer(unsafe.SliceData(rc.Groups)))
			cfg.group_ids_len = C.uint64_t(len(rc.Groups))
		}
	}
	cfg.data_type = C.int32_t(rc.DataType)
	return cfg
}

func cbool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

func strPtr(s string) *C.char          { return (*C.char)(cabi.StringPtr(s)) }
func bytesPtr(b []byte) unsafe.Pointer { return cabi.SlicePtr(b) }
func offsPtr(o []uint64) *C.uint64_t   { return (*C.uint64_t)(cabi.SlicePtr(o)) }
func u64Ptr(s []uint64) *C.uint64_t    { return (*C.uint64_t)(cabi.SlicePtr(s)) }
func addrsPtr(a []uintptr) *C.uintptr_t {
	return (*C.uintptr_t)(cabi.SlicePtr(a))
}
func i64Ptr(r []int64) *C.int64_t { return (*C.int64_t)(cabi.SlicePtr(r)) }

// keysPtr never returns NULL for a non-empty key list, even when every key
// is empty (the engines refuse a NULL key buffer).
func keysPtr(keys []byte) *C.char {
	if cap(keys) == 0 {
		return (*C.char)(unsafe.Pointer(&noKeyBytes))
	}
	return (*C.char)(unsafe.Pointer(unsafe.SliceData(keys[:1])))
}

// nKeys is the number of keys of a packed list with these offsets.
func nKeys(keyOffs []uint64) C.size_t { return C.size_t(max(len(keyOffs)-1, 0)) }

// noKeyBytes is the key buffer of a list whose keys are all empty.
var noKeyBytes byte

// MaxKeyLen is MCGO_MAX_KEY_LEN, for the test that pins mooncake.MaxKeyLen
// to the header (a cgo test: without cgo there is no header to read).
//
//nocgo:omit
const MaxKeyLen = C.MCGO_MAX_KEY_LEN

// The Go and C layouts of a segment id must agree: ids cross as arrays.
var _ [unsafe.Sizeof(SegmentID{}) - unsafe.Sizeof(C.mcgo_segment_id{})]struct{}
var _ [unsafe.Sizeof(C.mcgo_segment_id{}) - unsafe.Sizeof(SegmentID{})]struct{}

func idsPtr(ids []SegmentID) *C.mcgo_segment_id {
	return (*C.mcgo_segment_id)(unsafe.Pointer(unsafe.SliceData(ids)))
}

// cstrings are NUL-terminated copies for a call that takes C strings;
// free releases them.
type cstrings []*C.char

func newCStrings(ss ...string) cstrings {
	out := make(cstrings, len(ss))
	for i, s := range ss {
		out[i] = C.CString(s)
	}
	return out
}

func (cs cstrings) free() {
	for _, p := range cs {
		C.free(unsafe.Pointer(p))
	}
}

// AllocateAndMountSegment mounts size more bytes (rounded up to slabs):
// ids[:n] are the segments, allocated the bytes mounted.
func (c Client) AllocateAndMountSegment(size uint64, protocol, location string, ids []SegmentID) (n int, allocated uint64, rc int32) {
	cs := newCStrings(protocol, location)
	defer cs.free()
	var cn C.size_t
	var ca C.uint64_t
	rc = int32(C.mcgo_store_allocate_and_mount_segment(c.p, C.uint64_t(size), cs[0], cs[1],
		idsPtr(ids), C.size_t(len(ids)), &cn, &ca))
	return int(cn), uint64(ca), rc
}

// MountSegment mounts [offset, offset+size) of the file at path.
func (c Client) MountSegment(path string, offset, size uint64, protocol, location string, ids []SegmentID) (n int, rc int32) {
	cs := newCStrings(path, protocol, location)
	defer cs.free()
	var cn C.size_t
	rc = int32(C.mcgo_store_mount_segment(c.p, cs[0], C.uint64_t(offset), C.uint64_t(size), cs[1], cs[2],
		idsPtr(ids), C.size_t(len(ids)), &cn))
	return int(cn), rc
}

// UnmountSegments unmounts ids (and frees their memory when free: the
// allocated kind), filling results[i].
func (c Client) UnmountSegments(ids []SegmentID, graceSeconds uint64, free bool, results []int64) int32 {
	if free {
		return int32(C.mcgo_store_unmount_and_free_segment(c.p, idsPtr(ids), C.size_t(len(ids)),
			C.uint64_t(graceSeconds), i64Ptr(results)))
	}
	return int32(C.mcgo_store_unmount_segment(c.p, idsPtr(ids), C.size_t(len(ids)),
		C.uint64_t(graceSeconds), i64Ptr(results)))
}

// BatchGetSessionStart starts get sessions for the keys.
func (c Client) BatchGetSessionStart(keys []byte, keyOffs []uint64, results []int64) int32 {
	return int32(C.mcgo_store_batch_get_session_start(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs), i64Ptr(results)))
}

// BatchGetIntoMultiBufferRanges reads the ranges of the keys' sessions.
func (c Client) BatchGetIntoMultiBufferRanges(keys []byte, keyOffs []uint64, r *Ranges, results []int64) int32 {
	return int32(C.mcgo_store_batch_get_into_multi_buffer_ranges(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(r.Addrs), u64Ptr(r.Sizes), u64Ptr(r.At), offsPtr(r.Offsets), i64Ptr(results)))
}

// BatchGetSessionEnd drops the keys' get sessions.
func (c Client) BatchGetSessionEnd(keys []byte, keyOffs []uint64) int32 {
	return int32(C.mcgo_store_batch_get_session_end(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs)))
}

// BatchPutSessionStart reserves the objects of put sessions.
func (c Client) BatchPutSessionStart(keys []byte, keyOffs []uint64, sizes []uint64, rc *Replicate, results []int64) int32 {
	return int32(C.mcgo_store_batch_put_session_start(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		u64Ptr(sizes), rc.c(), i64Ptr(results)))
}

// BatchPutFromMultiBufferRanges writes ranges of the keys' reserved objects.
func (c Client) BatchPutFromMultiBufferRanges(keys []byte, keyOffs []uint64, r *Ranges, results []int64) int32 {
	return int32(C.mcgo_store_batch_put_from_multi_buffer_ranges(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(r.Addrs), u64Ptr(r.Sizes), u64Ptr(r.At), offsPtr(r.Offsets), i64Ptr(results)))
}

// BatchPutSessionSettle ends (commit) or revokes the keys' put sessions.
func (c Client) BatchPutSessionSettle(keys []byte, keyOffs []uint64, commit bool, results []int64) int32 {
	if commit {
		return int32(C.mcgo_store_batch_put_session_end(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs), i64Ptr(results)))
	}
	return int32(C.mcgo_store_batch_put_session_revoke(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs), i64Ptr(results)))
}

// CreateCopyTask asks for key's object to be copied to the targets.
func (c Client) CreateCopyTask(key string, targets []string) (SegmentID, int32) {
	names, n := PackNames(targets)
	var id C.mcgo_uuid
	rc := int32(C.mcgo_store_create_copy_task(c.p, strPtr(key), C.size_t(len(key)), (*C.char)(bytesPtr(names)),
		C.uint32_t(n), C.uint64_t(len(names)), &id))
	return SegmentID{uint64(id.first), uint64(id.second)}, rc
}

// CreateMoveTask asks for key's replica on source to move to target.
func (c Client) CreateMoveTask(key, source, target string) (SegmentID, int32) {
	var id C.mcgo_uuid
	rc := int32(C.mcgo_store_create_move_task(c.p, strPtr(key), C.size_t(len(key)), strPtr(source), C.size_t(len(source)),
		strPtr(target), C.size_t(len(target)), &id))
	return SegmentID{uint64(id.first), uint64(id.second)}, rc
}

// QueryTask reads a task's state.
func (c Client) QueryTask(id SegmentID) (TaskInfo, int32) {
	var out C.mcgo_task_info
	rc := int32(C.mcgo_store_query_task(c.p, C.mcgo_uuid{first: C.uint64_t(id.First), second: C.uint64_t(id.Second)}, &out))
	if rc != 0 {
		return TaskInfo{}, rc
	}
	return TaskInfo{
		ID:             SegmentID{uint64(out.id.first), uint64(out.id.second)},
		AssignedClient: SegmentID{uint64(out.assigned_client.first), uint64(out.assigned_client.second)},
		Type:           int32(out._type), Status: int32(out.status),
		CreatedMs: int64(out.created_at_ms), UpdatedMs: int64(out.updated_at_ms),
		Message: C.GoString(&out.message[0]),
	}, 0
}

// GetIntoRanges reads the ranges of the keys' objects; results has one
// entry per range.
func (c Client) GetIntoRanges(keys []byte, keyOffs []uint64, r *Ranges, results []int64) int32 {
	return int32(C.mcgo_store_get_into_ranges(c.p, keysPtr(keys), offsPtr(keyOffs), nKeys(keyOffs),
		addrsPtr(r.Addrs), u64Ptr(r.Sizes), u64Ptr(r.At), offsPtr(r.Offsets), i64Ptr(results)))
}

// UnmountLocalDiskSegment drains the SSD-offload tier, blocking for the
// grace period.
func (c Client) UnmountLocalDiskSegment(graceSeconds uint64) int32 {
	return int32(C.mcgo_store_unmount_local_disk_segment(c.p, C.uint64_t(graceSeconds)))
}

// OffloadRPCReadCount is upstream's get_offload_rpc_read_count.
func (c Client) OffloadRPCReadCount() int64 { return int64(C.mcgo_store_offload_rpc_read_count(c.p)) }
