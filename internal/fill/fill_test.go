package fill

import (
	"bytes"
	"testing"
)

func TestFill(t *testing.T) {
	a, b, c := make([]byte, 64), make([]byte, 64), make([]byte, 64)
	Fill(a, 1)
	Fill(b, 1)
	Fill(c, 2)
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatalf("same seed must repeat, different seeds must differ: %x %x %x", a, b, c)
	}
	if bytes.Equal(a, make([]byte, 64)) {
		t.Fatal("all zero")
	}
}
