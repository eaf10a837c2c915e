// Embedded engine: key patterns for mcgo_store_remove_by_regex. Kept apart so that
// <regex> is included by one small file only.
#ifndef MCGO_EMBEDDED_STORE_REGEX_H_
#define MCGO_EMBEDDED_STORE_REGEX_H_

#include <memory>
#include <string>

namespace mcgo::embedded {

// An ECMAScript regular expression matched the way Mooncake's master does
// (std::regex with the ECMAScript grammar, std::regex_search: a key matches
// when any part of it matches).
class KeyPattern {
 public:
  KeyPattern();
  ~KeyPattern();
  KeyPattern(const KeyPattern &) = delete;
  KeyPattern &operator=(const KeyPattern &) = delete;

  // False for a pattern std::regex rejects.
  bool Compile(const std::string &pattern);
  bool Matches(const std::string &key) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcgo::embedded

#endif  // MCGO_EMBEDDED_STORE_REGEX_H_
