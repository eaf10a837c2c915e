//go:build !mooncake_native

// GCC 12 reports a false -Wmaybe-uninitialized inside libstdc++'s <regex>
// (std::function moves in regex_automaton.h) at -O2; it would break the
// -Werror build. It concerns library code only, so it is silenced for this
// file, the only one that includes <regex>.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "engine_regex.h"

#include <regex>

namespace mcgo_engine {

struct KeyPattern::Impl {
  std::regex re;
};

KeyPattern::KeyPattern() : impl_(new Impl()) {}
KeyPattern::~KeyPattern() = default;

bool KeyPattern::Compile(const std::string &pattern) {
  try {
    impl_->re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error &) {
    return false;
  }
  return true;
}

bool KeyPattern::Matches(const std::string &key) const {
  return std::regex_search(key, impl_->re);
}

}  // namespace mcgo_engine
