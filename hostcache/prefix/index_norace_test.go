//go:build !race

package prefix_test

const raceEnabled = false
