package mooncaketest

import (
	"testing"

	"github.com/mooncake-go/mooncake-go/internal/testcluster"
)

// Python returns upstream's Python client for a test that drives it: the
// interpreter (MCGO_PYTHON, else python3) and the environment with
// MCGO_PYTHONPATH. Without an importable mooncake.store the test is
// skipped, or fails where it is required (MCGO_REQUIRE_PYTHON=1).
func Python(t testing.TB) (py string, env []string) {
	t.Helper()
	py, env, required, err := testcluster.Python()
	if err != nil {
		if required {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return py, env
}
