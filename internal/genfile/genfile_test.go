package genfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestStale(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "same.go"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "edited.go"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Stale(root, map[string][]byte{"same.go": []byte("a"), "edited.go": []byte("c"), "missing.go": nil})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"edited.go", "missing.go"}; !slices.Equal(got, want) {
		t.Fatalf("Stale = %v, want %v", got, want)
	}
}

func TestRoot(t *testing.T) {
	r, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("Root %s has no go.mod: %v", r, err)
	}
}
