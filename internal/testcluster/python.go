package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Python finds upstream's Python client for a test: the interpreter
// (MCGO_PYTHON, else python3) and an environment with MCGO_PYTHONPATH as
// its PYTHONPATH, checked by importing mooncake.store. required says
// whether a test that cannot have it must fail rather than skip
// (MCGO_REQUIRE_PYTHON=1).
func Python() (py string, env []string, required bool, err error) {
	py = os.Getenv("MCGO_PYTHON")
	if py == "" {
		py = "python3"
	}
	env = os.Environ()
	if pp := os.Getenv("MCGO_PYTHONPATH"); pp != "" {
		env = append(env, "PYTHONPATH="+pp)
	}
	required = os.Getenv("MCGO_REQUIRE_PYTHON") == "1"
	probe := exec.Command(py, "-c", "import mooncake.store")
	probe.Env = env
	if out, perr := probe.CombinedOutput(); perr != nil {
		err = fmt.Errorf("upstream's Python store module is not importable with %s (set MCGO_PYTHONPATH / make test-native MOONCAKE_PYTHONPATH=...): %v: %s",
			py, perr, strings.TrimSpace(string(out)))
	}
	return py, env, required, err
}
