// A tiny test harness for the C++ tests of the embedded engine (no gtest:
// a fresh CI machine has only gcc/g++, make and Go).
//
//   TEST(name) { CHECK_EQ(mcgo_store_put(...), 0); ... }
//   MCGO_TEST_MAIN()          // or call mcgo_test::RunAll() from main
//
// Every failed check is printed with file:line and both values; the
// process exits 1 if any check failed, 0 otherwise.
#ifndef MCGO_TESTS_CHECK_H_
#define MCGO_TESTS_CHECK_H_

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace mcgo_test {

struct Registry {
  std::vector<std::pair<const char *, std::function<void()>>> tests;
  std::atomic<long> checks{0};    // checks may run on several threads
  std::atomic<long> failures{0};
};

inline Registry &Reg() {
  static Registry r;
  return r;
}

struct Registrar {
  Registrar(const char *name, std::function<void()> fn) {
    Reg().tests.emplace_back(name, std::move(fn));
  }
};

inline void Fail(const char *file, int line, const std::string &what) {
  ++Reg().failures;
  std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what.c_str());
}

inline std::string Show(long long v) { return std::to_string(v); }
inline std::string Show(unsigned long long v) { return std::to_string(v); }
inline std::string Show(long v) { return std::to_string(v); }
inline std::string Show(unsigned long v) { return std::to_string(v); }
inline std::string Show(int v) { return std::to_string(v); }
inline std::string Show(unsigned v) { return std::to_string(v); }
inline std::string Show(bool v) { return v ? "true" : "false"; }
inline std::string Show(const std::string &v) { return "\"" + v + "\""; }
inline std::string Show(const char *v) { return v ? "\"" + std::string(v) + "\"" : "NULL"; }
inline std::string Show(const std::vector<std::string> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + Show(v[i]);
  return out + "]";
}

// a == b, comparing integers of mixed signedness by value.
template <typename A, typename B>
bool Equal(const A &a, const B &b) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B> &&
                std::is_signed_v<A> != std::is_signed_v<B>) {
    if constexpr (std::is_signed_v<A>) {
      return a >= 0 && static_cast<std::make_unsigned_t<A>>(a) == b;
    } else {
      return b >= 0 && a == static_cast<std::make_unsigned_t<B>>(b);
    }
  } else {
    return a == b;
  }
}

template <typename A, typename B>
void CheckEq(const A &a, const B &b, const char *ea, const char *eb,
             const char *file, int line) {
  ++Reg().checks;
  if (!Equal(a, b)) {
    Fail(file, line, std::string("CHECK_EQ(") + ea + ", " + eb + "): " +
                         Show(a) + " != " + Show(b));
  }
}

inline int RunAll() {
  for (auto &t : Reg().tests) {
    long before = Reg().failures;
    std::fprintf(stderr, "[ RUN  ] %s\n", t.first);
    t.second();
    std::fprintf(stderr, "[ %s ] %s\n",
                 Reg().failures == before ? " OK " : "FAIL", t.first);
  }
  std::fprintf(stderr, "%zu tests, %ld checks, %ld failures\n",
               Reg().tests.size(), Reg().checks.load(), Reg().failures.load());
  return Reg().failures == 0 ? 0 : 1;
}

}  // namespace mcgo_test

#define MCGO_TEST_CAT2(a, b) a##b
#define MCGO_TEST_CAT(a, b) MCGO_TEST_CAT2(a, b)
#define TEST(name)                                                   \
  static void name();                                                \
  static ::mcgo_test::Registrar MCGO_TEST_CAT(registrar_, name)(#name, \
                                                                name); \
  static void name()

#define CHECK(cond)                                              \
  do {                                                           \
    ++::mcgo_test::Reg().checks;                                 \
    if (!(cond)) ::mcgo_test::Fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

#define CHECK_EQ(a, b) ::mcgo_test::CheckEq((a), (b), #a, #b, __FILE__, __LINE__)

// n bytes at a and b are equal.
#define CHECK_BYTES(a, b, n)                                                 \
  do {                                                                       \
    ++::mcgo_test::Reg().checks;                                             \
    if (std::memcmp((a), (b), (n)) != 0)                                     \
      ::mcgo_test::Fail(__FILE__, __LINE__,                                  \
                        "CHECK_BYTES(" #a ", " #b ", " #n "): bytes differ"); \
  } while (0)

#define MCGO_TEST_MAIN() \
  int main() { return ::mcgo_test::RunAll(); }

#endif  // MCGO_TESTS_CHECK_H_
