//go:build race

package prefix

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts are measured only without it.
const raceEnabled = true
