package mooncake

import (
	"strconv"

	"github.com/mooncake-go/mooncake-go/internal/cabi/cstore"
	"github.com/mooncake-go/mooncake-go/mooncake/hostmem"
)

// ReplicaKind says where a replica lives.
type ReplicaKind int32

// Replica kinds (upstream's Replica::Descriptor variants).
const (
	ReplicaMemory    ReplicaKind = 0 // in a client's mounted segment
	ReplicaNoF       ReplicaKind = 1 // NVMe-oF
	ReplicaDisk      ReplicaKind = 2 // a file (SSD offload)
	ReplicaLocalDisk ReplicaKind = 3 // a client's local disk
	ReplicaDFS       ReplicaKind = 4 // a distributed file system
)

var replicaKindNames = [...]string{"memory", "nof", "disk", "local_disk", "dfs"}

func (k ReplicaKind) String() string {
	if k >= 0 && int(k) < len(replicaKindNames) {
		return replicaKindNames[k]
	}
	return "ReplicaKind(" + strconv.Itoa(int(k)) + ")"
}

// ReplicaStatus is upstream's ReplicaStatus.
type ReplicaStatus int32

// Replica states.
const (
	ReplicaUndefined   ReplicaStatus = 0
	ReplicaInitialized ReplicaStatus = 1 // space allocated, waiting for the write
	ReplicaProcessing  ReplicaStatus = 2 // being written
	ReplicaComplete    ReplicaStatus = 3 // readable
	ReplicaRemoved     ReplicaStatus = 4
	ReplicaFailed      ReplicaStatus = 5
)

var replicaStatusNames = [...]string{"undefined", "initialized", "processing", "complete", "removed", "failed"}

func (s ReplicaStatus) String() string {
	if s >= 0 && int(s) < len(replicaStatusNames) {
		return replicaStatusNames[s]
	}
	return "ReplicaStatus(" + strconv.Itoa(int(s)) + ")"
}

// Replica describes one replica of an object (upstream's
// Replica::Descriptor).
type Replica struct {
	ID     uint64 // upstream's replica id (the embedded engine: the replica's index)
	Kind   ReplicaKind
	Status ReplicaStatus
	// Size is the buffer's size (memory, NoF) or the object's (files).
	Size uint64
	// Address is the buffer's address in its segment (memory, NoF; 0 in
	// the embedded engine, which has no addresses).
	Address uint64
	// FileOffset is the object's offset in its file (DFS).
	FileOffset uint64
	// Location is the segment (transport endpoint) of a memory, NoF or
	// local-disk replica, the file path of a disk or DFS replica.
	Location string
}

// GetReplicaDesc returns the replicas of key (upstream's get_replica_desc).
// It is a lookup, and grants a read lease as a get does. A key that is
// missing, or not readable yet, gives ErrObjectNotFound.
func (s *Store) GetReplicaDesc(key string) ([]Replica, error) {
	ks := s.c().packKeys([]string{key})
	defer s.c().freeKeys(ks)
	reps, res, err := s.batchReplicaDesc(&ks.k, nil)
	if res == nil {
		return nil, err
	}
	if res[0] < 0 {
		return nil, codeErr(OpGetReplicaDesc, key, res[0])
	}
	return reps[0], nil
}

// BatchGetReplicaDesc returns the replicas of each key in one call
// (upstream's batch_get_replica_desc): replicas[i] are key i's, results[i]
// their count or a negative code (ErrObjectNotFound for a key that is
// missing or not readable yet; upstream reports both by leaving the key
// out), and the error a *BatchError when any key failed. results is reused
// when it has room.
func (s *Store) BatchGetReplicaDesc(keys *hostmem.Keys, results []int64) (replicas [][]Replica, res []int64, err error) {
	k, err := checkedKeys(OpBatchGetReplicaDesc, keys)
	if err != nil {
		return nil, nil, err
	}
	if k.Len() == 0 {
		return nil, resultsFor(results, 0), nil
	}
	return s.batchReplicaDesc(k, results)
}

// BatchReplicaClear clears replicas (upstream's batch_replica_clear): for
// each key this client wrote last and whose read leases have expired, its
// replicas on segment (a segment name, Store.Hostname of its client), or
// all of them when segment is "". An object left without replicas is
// removed. results[i] is 1 for a key cleared and 0 for one skipped (missing,
// written by another client, leased, being written, or with no replica on
// segment): upstream skips such keys without a code.
func (s *Store) BatchReplicaClear(keys *hostmem.Keys, segment string, results []int64) ([]int64, error) {
	k, err := checkedKeys(OpBatchReplicaClear, keys)
	if err != nil {
		return nil, err
	}
	return s.packedKeysCall(OpBatchReplicaClear, k, results, func(h cstore.Client, k *hostmem.Keys, res []int64) int32 {
		return h.BatchReplicaClear(k.Buf, k.Offsets, segment, res)
	})
}

func (s *Store) batchReplicaDesc(k *hostmem.Keys, results []int64) ([][]Replica, []int64, error) {
	res := resultsFor(results, k.Len())
	if !s.c().gate.Enter() {
		return nil, nil, closedErr(OpBatchGetReplicaDesc, "")
	}
	t0 := now()
	descs, rc := s.c().handle.BatchGetReplicaDesc(k.Buf, k.Offsets, res)
	s.c().stats.batch(OpBatchGetReplicaDesc, t0, rc, res, nil)
	s.c().gate.Leave()
	res, err := batchResult(OpBatchGetReplicaDesc, k, rc, res)
	if res == nil {
		return nil, nil, err
	}
	out := make([][]Replica, len(res))
	all := make([]Replica, len(descs))
	for i, d := range descs {
		all[i] = Replica{ID: d.ID, Kind: ReplicaKind(d.Kind), Status: ReplicaStatus(d.Status), Size: d.Size,
			Address: d.Address, FileOffset: d.FileOffset, Location: d.Location}
	}
	next := 0
	for i, r := range res {
		if r > 0 && next+int(r) <= len(all) {
			out[i] = all[next : next+int(r) : next+int(r)]
			next += int(r)
		}
	}
	return out, res, err
}
