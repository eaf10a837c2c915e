package main

import "github.com/mooncake-go/mooncake-go/mooncake"

// combiningOps are the operations whose single-key calls combine
// (docs/combining.md, "Which calls"); a twin's counters are their sums.
var combiningOps = []mooncake.Op{mooncake.OpGetInto, mooncake.OpPutFrom, mooncake.OpUpsertFrom, mooncake.OpIsExist,
	mooncake.OpGet, mooncake.OpPut, mooncake.OpUpsert, mooncake.OpRemove}

// combCounters are a store's combining counters (mooncake.OpStats), summed
// over combiningOps.
type combCounters struct {
	calls, combined, batches uint64
	sizes                    []uint64 // batch crossings by size bucket
}

// combCounters reads the counters of the case's store when the case is a
// combining twin (nil otherwise: the other cases read nothing more).
func (cr *caseRun) combCounters() *combCounters {
	if !cr.c.Combining {
		return nil
	}
	s := cr.st.Stats()
	var k combCounters
	for _, op := range combiningOps {
		o := s.Op(op)
		k.calls += o.Calls
		k.combined += o.Combined
		k.batches += o.CombinedBatches
		if k.sizes == nil {
			k.sizes = make([]uint64, len(o.CombinedBatchSizes))
		}
		for i, n := range o.CombinedBatchSizes {
			k.sizes[i] += n
		}
	}
	return &k
}

// since is k minus the earlier reading k0: what the measured window added.
func (k *combCounters) since(k0 *combCounters) *combCounters {
	if k == nil || k0 == nil {
		return nil
	}
	d := &combCounters{calls: k.calls - k0.calls, combined: k.combined - k0.combined, batches: k.batches - k0.batches,
		sizes: make([]uint64, len(k.sizes))}
	for i := range k.sizes {
		d.sizes[i] = k.sizes[i] - k0.sizes[i]
	}
	return d
}
