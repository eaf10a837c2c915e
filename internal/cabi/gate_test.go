package cabi

import "testing"

// TestGateLone: Leave yields only for the last call in flight, and a
// closed gate admits nothing.
func TestGateLone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls int
		want  []bool // leave's result for each call, in order
	}{
		{"one call", 1, []bool{true}},
		{"two calls", 2, []bool{false, true}},
		{"four calls", 4, []bool{false, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g Gate
			for i := 0; i < tc.calls; i++ {
				if !g.Enter() {
					t.Fatal("an open gate refused a call")
				}
			}
			for i, want := range tc.want {
				if got := g.leave(); got != want {
					t.Errorf("leave %d: lone %v, want %v", i, got, want)
				}
			}
			if !g.Close(func() {}) || g.Enter() {
				t.Error("a closed gate admitted a call")
			}
		})
	}
}

// BenchmarkGate is the cost of admitting one call: Enter and Leave,
// without and with the yield a lone native call makes.
func BenchmarkGate(b *testing.B) {
	for _, noYield := range []bool{true, false} {
		name := "yield"
		if noYield {
			name = "no-yield"
		}
		b.Run(name, func(b *testing.B) {
			g := &Gate{NoYield: noYield}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				g.Enter()
				if g.leave() && !noYield {
					yieldNow()
				}
			}
		})
	}
}
