//go:build race

package prefix_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts of pooled paths mean nothing under it.
const raceEnabled = true
