//go:build !mooncake_native

// GCC 12 reports a false -Wmaybe-uninitialized inside libstdc++'s <regex>
// (std::function moves in regex_automaton.h) at -O2; it would break the
// -Werror build. It concerns library code only, so it is silenced for this
// file, the only one that includes <regex>.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "regex.h"

#include <locale>
#include <mutex>
#include <regex>

namespace mcgo::embedded {
namespace {

// libstdc++'s ctype<char> fills its narrow()/widen() caches lazily, without
// synchronisation, the first time each character is seen; std::regex's
// compiler uses them, so two threads compiling patterns at once race on the
// cache (the same bytes are written, but ThreadSanitizer rightly reports
// it). Fill the caches once, before any pattern is compiled.
void WarmUpCtype() {
  const auto &ct = std::use_facet<std::ctype<char>>(std::locale());
  for (int c = 0; c < 256; ++c) {
    ct.narrow(static_cast<char>(c), '\0');
    ct.widen(static_cast<char>(c));
  }
}

}  // namespace

struct KeyPattern::Impl {
  std::regex re;
};

KeyPattern::KeyPattern() : impl_(new Impl()) {}
KeyPattern::~KeyPattern() = default;

bool KeyPattern::Compile(const std::string &pattern) {
  static std::once_flag warm;
  std::call_once(warm, WarmUpCtype);
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

}  // namespace mcgo::embedded
