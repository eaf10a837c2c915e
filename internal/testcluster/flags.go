package testcluster

import (
	"fmt"
	"os/exec"
	"regexp"
	"sync"
)

// Upstream versions differ in the master's flags; what a master binary
// has is read once from its --helpfull (gflags lists every flag there).
var (
	flagsMu sync.Mutex
	flagSet = map[string]map[string]bool{} // binary -> its flags
)

var helpFlag = regexp.MustCompile(`(?m)^\s+-([a-z0-9_]+) \(`)

// hasFlag says whether the master binary bin takes --name.
func hasFlag(bin, name string) (bool, error) {
	flagsMu.Lock()
	defer flagsMu.Unlock()
	if fs, ok := flagSet[bin]; ok {
		return fs[name], nil
	}
	// gflags prints the flags and exits with status 1.
	out, _ := exec.Command(bin, "--helpfull").Output()
	fs := map[string]bool{}
	for _, m := range helpFlag.FindAllSubmatch(out, -1) {
		fs[string(m[1])] = true
	}
	if len(fs) == 0 {
		return false, fmt.Errorf("%s --helpfull listed no flags", bin)
	}
	flagSet[bin] = fs
	return fs[name], nil
}
