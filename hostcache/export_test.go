package hostcache

import "github.com/mooncake-go/mooncake-go/mooncake/hostmem"

// What the external tests see of the backend's scratch batches.

type Batch = batch

func (b *Backend) PrepareV1(bt *Batch, pageKeys []string, hostIndices []int64) error {
	return b.prepareV1(bt, pageKeys, hostIndices)
}

func (b *Backend) PrepareV2(bt *Batch, transfers []PoolTransfer, forSet bool) error {
	return b.prepareV2(bt, transfers, forSet)
}

// Keys returns a copy of the batch's keys (allocates).
func (b *batch) Keys() []string            { return b.keys.Strings() }
func (b *batch) PackedKeys() *hostmem.Keys { return &b.keys }
func (b *batch) Buffers() hostmem.Buffers  { return b.bufs }
func (b *batch) Multi() bool               { return b.multi() }
func (b *batch) KeysPerPage() int          { return b.keysPerPage }
func (b *batch) NumKeys() int              { return b.nkeys() }
