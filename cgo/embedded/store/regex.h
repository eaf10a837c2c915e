// Embedded engine: key patterns for mcgo_store_remove_by_regex, in the
// subset of cgo/common/key_pattern.h, matched in linear time.
#ifndef MCGO_EMBEDDED_STORE_REGEX_H_
#define MCGO_EMBEDDED_STORE_REGEX_H_

#include <memory>
#include <string>

namespace mcgo::embedded {

// A key pattern with the meaning Mooncake's master gives it (ECMAScript,
// std::regex_search: a key matches when any part of it matches), for the
// patterns of the subset only.
class KeyPattern {
 public:
  KeyPattern();
  ~KeyPattern();
  KeyPattern(const KeyPattern &) = delete;
  KeyPattern &operator=(const KeyPattern &) = delete;

  // False for a pattern outside the subset or malformed.
  bool Compile(const std::string &pattern);
  bool Matches(const std::string &key) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcgo::embedded

#endif  // MCGO_EMBEDDED_STORE_REGEX_H_
