//go:build !mooncake_native

#include "regex.h"

#include "common/key_pattern.h"

namespace mcgo::embedded {

// The search keeps per-call scratch; RemoveMatching calls Matches under the
// cluster's lock, one key at a time, so one Searcher serves.
struct KeyPattern::Impl {
  mcgo::pattern::Program program;
  std::unique_ptr<mcgo::pattern::Searcher> searcher;
};

KeyPattern::KeyPattern() : impl_(new Impl()) {}
KeyPattern::~KeyPattern() = default;

bool KeyPattern::Compile(const std::string &pattern) {
  std::string err;
  if (!mcgo::pattern::Compile(pattern, &impl_->program, &err)) return false;
  impl_->searcher = std::make_unique<mcgo::pattern::Searcher>(impl_->program);
  return true;
}

bool KeyPattern::Matches(const std::string &key) const {
  return impl_->searcher != nullptr && impl_->searcher->Search(key);
}

}  // namespace mcgo::embedded
