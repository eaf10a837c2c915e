// Package fill writes reproducible byte patterns for tests, the demo and
// benchmarks.
package fill

// Fill writes a xorshift pattern derived from seed into b. The same seed
// always gives the same bytes; different seeds give different bytes.
func Fill(b []byte, seed uint64) {
	x := seed*0x9E3779B97F4A7C15 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
}
