// Must FAIL (CTest expects a non-zero exit): proves that a failed check
// makes a test executable fail, and that the checks compare what they say.
#include "test_util.h"

TEST(FailingChecksAreReported) {
  CHECK_EQ(mcgo_abi_version(), 3u);  // wrong on purpose
}

TEST(MixedSignComparisonIsByValue) {
  // -1 must not compare equal to UINT64_MAX. If it did, this test would
  // pass and the executable could exit 0 only if the check above passed
  // too; RunAll counts every failure.
  CHECK(!mcgo_test::Equal(static_cast<int64_t>(-1), UINT64_MAX));
  CHECK(mcgo_test::Equal(static_cast<int64_t>(5), 5u));
}

MCGO_TEST_MAIN()
