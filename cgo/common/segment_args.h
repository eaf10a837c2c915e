// segment_args.h: the argument rules of the segment calls of mcgo/store.h,
// shared by both backends so that both refuse the same inputs. Header-only,
// C++17, POSIX.
#ifndef MCGO_COMMON_SEGMENT_ARGS_H_
#define MCGO_COMMON_SEGMENT_ARGS_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "mcgo/store.h"

namespace mcgo::args {

// Rounds size up to whole slabs, as upstream's allocate_and_mount_segment
// does. False for 0 and for sizes that overflow.
inline bool SlabAligned(uint64_t size, uint64_t *out) {
  if (size == 0 || size > UINT64_MAX - (MCGO_SEGMENT_SLAB_SIZE - 1)) return false;
  *out = (size + MCGO_SEGMENT_SLAB_SIZE - 1) / MCGO_SEGMENT_SLAB_SIZE * MCGO_SEGMENT_SLAB_SIZE;
  return true;
}

// The protocol a mount uses: the store's when the call names none. Only
// the protocols a store can be set up with are accepted.
inline bool MountProtocol(const char *p, const std::string &store_protocol, std::string *out) {
  *out = (p == nullptr || *p == '\0') ? store_protocol : std::string(p);
  return *out == "tcp" || *out == "rdma";
}

// Checks a file mount as upstream's mount_segment does (opens read-write,
// the range inside the file, a page-aligned offset), and refuses size 0,
// which upstream mounts as no segment at all and reports success.
inline bool MountFileOk(const char *path, uint64_t offset, uint64_t size) {
  if (path == nullptr || *path == '\0' || size == 0) return false;
  const long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || offset % static_cast<uint64_t>(page) != 0) return false;
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
                  offset <= static_cast<uint64_t>(st.st_size) &&
                  size <= static_cast<uint64_t>(st.st_size) - offset;
  close(fd);
  return ok;
}

// All the arguments of an allocate-and-mount call (ids may be NULL only
// with no room); sets the rounded size and the protocol used.
inline bool AllocateArgsOk(const mcgo_segment_id *ids, size_t ids_cap, const size_t *n_ids,
                           const uint64_t *allocated, uint64_t size, const char *protocol,
                           const std::string &store_protocol, uint64_t *aligned, std::string *proto) {
  return n_ids != nullptr && allocated != nullptr && (ids != nullptr || ids_cap == 0) &&
         SlabAligned(size, aligned) && MountProtocol(protocol, store_protocol, proto);
}

// All the arguments of a file mount; sets the protocol used.
inline bool MountArgsOk(const mcgo_segment_id *ids, size_t ids_cap, const size_t *n_ids, const char *path,
                        uint64_t offset, uint64_t size, const char *protocol,
                        const std::string &store_protocol, std::string *proto) {
  return n_ids != nullptr && (ids != nullptr || ids_cap == 0) && MountFileOk(path, offset, size) &&
         MountProtocol(protocol, store_protocol, proto);
}

// Upstream's text form of a segment id (UuidToString).
inline std::string SegmentIdString(const mcgo_segment_id &id) {
  return std::to_string(id.first) + "-" + std::to_string(id.second);
}

// Parses upstream's text form back; false for anything else.
inline bool ParseSegmentId(const std::string &s, mcgo_segment_id *out) {
  const size_t dash = s.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == s.size()) return false;
  uint64_t part[2] = {0, 0};
  const std::string halves[2] = {s.substr(0, dash), s.substr(dash + 1)};
  for (int k = 0; k < 2; ++k) {
    for (char c : halves[k]) {
      if (c < '0' || c > '9') return false;
      const uint64_t d = static_cast<uint64_t>(c - '0');
      if (part[k] > (UINT64_MAX - d) / 10) return false;
      part[k] = part[k] * 10 + d;
    }
  }
  out->first = part[0];
  out->second = part[1];
  return true;
}

}  // namespace mcgo::args

#endif  // MCGO_COMMON_SEGMENT_ARGS_H_
