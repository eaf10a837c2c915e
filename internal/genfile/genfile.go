// Package genfile is what the module's generators share
// (internal/codes/gen, internal/cabi/gen): the module root, writing the
// generated files, and finding the committed ones that are stale.
package genfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Root returns the module root: the nearest directory above the working
// directory that holds go.mod (go generate and go test run in the
// package's directory).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Generate is a generator: every file it makes, by its path under root.
type Generate func(root string) (map[string][]byte, error)

// Main runs a generator as a command named name: its files are written
// under the module root; an error is printed and exits the process.
func Main(name string, generate Generate) {
	err := func() error {
		root, files, err := run(generate)
		if err != nil {
			return err
		}
		for path, data := range files {
			if err := os.WriteFile(filepath.Join(root, path), data, 0o644); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// run runs generate in the module root.
func run(generate Generate) (string, map[string][]byte, error) {
	root, err := Root()
	if err != nil {
		return "", nil, err
	}
	files, err := generate(root)
	return root, files, err
}

// Stale returns, sorted, the paths of files whose committed copy under
// root differs from the generated one or is missing.
func Stale(root string, files map[string][]byte) ([]string, error) {
	var out []string
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if errors.Is(err, fs.ErrNotExist) {
			out = append(out, path)
			continue
		}
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(got, want) {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Current checks a generator against the committed files: an error when it
// does not make want files, or when a committed file is stale (say
// "go generate <command>").
func Current(generate Generate, want int, command string) error {
	root, files, err := run(generate)
	if err != nil {
		return err
	}
	if len(files) != want {
		return fmt.Errorf("generated %d files, want %d", len(files), want)
	}
	stale, err := Stale(root, files)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		return fmt.Errorf("stale: %v: run go generate %s", stale, command)
	}
	return nil
}
