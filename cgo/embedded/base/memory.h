// Embedded engine: memory for object bytes.
//
// Objects of 256 KiB and more come from a process-wide cache of blocks freed
// by removed or replaced objects (at most 1 GiB kept, and emptied when the
// last cluster of the process goes away), so a steady stream
// of puts and removes does not pay page faults on every put; blocks of 2 MiB
// and more are mmap'ed, 2 MiB aligned and advised as transparent huge pages,
// so fresh memory faults once per 2 MiB instead of once per 4 KiB. The real
// store writes into segment memory that was allocated (and, for RDMA,
// registered and faulted in) when the segment was mounted; this keeps the
// embedded engine's bandwidth close to memcpy without reserving
// global_segment_size bytes up front.
//
// Under AddressSanitizer everything goes through plain malloc/free, so that
// use-after-free of object memory is still detected.
#ifndef MCGO_EMBEDDED_BASE_MEMORY_H_
#define MCGO_EMBEDDED_BASE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace mcgo::embedded {

using Bytes = std::shared_ptr<uint8_t[]>;

// Uninitialised memory for an object of size bytes (size > 0), or null when
// it cannot be allocated. The memory returns to the cache (or the system)
// when the last reference goes away.
Bytes AllocateObjectBytes(uint64_t size);

// Bytes currently held in the cache (tests).
size_t CachedObjectBytes();

// Returns every cached block to the system.
void TrimObjectCache();

// False in AddressSanitizer builds, where blocks are never cached.
bool ObjectCacheEnabled();

}  // namespace mcgo::embedded

#endif  // MCGO_EMBEDDED_BASE_MEMORY_H_
