package prefix

// Quiesce returns once the index's checker has handled every learning
// request queued before the call (a no-op without Resync).
func Quiesce(x *Index) { x.barrier() }
