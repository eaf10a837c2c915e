// Must FAIL (CTest expects a non-zero exit): proves that a failed check
// makes a test executable fail, and that the checks compare what they say.
#include "check.h"
#include "mcgo/common.h"

TEST(FailingChecksAreReported) {
  CHECK_EQ(mcgo_abi_version(), MCGO_ABI_VERSION + 1u);  // wrong on purpose
}

TEST(MixedSignComparisonIsByValue) {
  // -1 must not compare equal to UINT64_MAX. If it did, this test would
  // pass and the executable could exit 0 only if the check above passed
  // too; RunAll counts every failure.
  CHECK(!mcgo_test::Equal(static_cast<int64_t>(-1), UINT64_MAX));
  CHECK(mcgo_test::Equal(static_cast<int64_t>(5), 5u));
}

MCGO_TEST_MAIN()
