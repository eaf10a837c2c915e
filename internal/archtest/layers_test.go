package archtest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mooncake-go/mooncake-go/"

// planned are packages the layer table places before they exist (the
// transfer engine's, while it is being built).
var planned = map[string]bool{}

// layers reads the import-layer table of docs/architecture.md.
func layers(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\| (\d+) \| [^|` + "`" + `]+ \| (.+) \|$`)
	pkg := regexp.MustCompile("`([^`]+)`")
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, p := range pkg.FindAllStringSubmatch(m[2], -1) {
			if _, dup := out[p[1]]; dup {
				t.Errorf("docs/architecture.md lists %s twice", p[1])
			}
			out[p[1]] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no import-layer table in docs/architecture.md")
	}
	return out
}

// imports lists every package of the module with its imports inside the
// module (test files excluded), for the given build tags.
func imports(t *testing.T, env []string, tags string) map[string][]string {
	t.Helper()
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, module+"...")...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p := strings.TrimPrefix(f[0], module)
		graph[p] = nil
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				graph[p] = append(graph[p], strings.TrimPrefix(imp, module))
			}
		}
	}
	return graph
}

// TestImportLayers: every package imports only packages of lower layers,
// in the default, the native and the cgo-free build.
func TestImportLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is needed to list the packages")
	}
	layer := layers(t)
	seen := map[string]bool{}           // packages of any build: some exist only with a build tag
	importedBy := map[string][]string{} // package -> its importers, in any build
	for _, build := range []struct {
		name string
		env  []string
		tags string
	}{
		// cgo set explicitly, so the result does not depend on the
		// environment the test runs in (make test runs it without cgo too).
		{"default", []string{"CGO_ENABLED=1"}, ""},
		{"native", []string{"CGO_ENABLED=1"}, "mooncake_native"},
		{"nocgo", []string{"CGO_ENABLED=0"}, ""},
	} {
		graph := imports(t, build.env, build.tags)
		for p, imps := range graph {
			seen[p] = true
			lp, ok := layer[p]
			if !ok {
				t.Errorf("%s: package %s is not in the layer table of docs/architecture.md", build.name, p)
				continue
			}
			for _, imp := range imps {
				if !slices.Contains(importedBy[imp], p) {
					importedBy[imp] = append(importedBy[imp], p)
				}
				if li, ok := layer[imp]; ok && li >= lp {
					t.Errorf("%s: %s (layer %d) imports %s (layer %d): only lower layers may be imported", build.name, p, lp, imp, li)
				}
			}
		}
	}
	// internal/ is the basement: what it holds lies under the APIs, so a
	// package there that other packages import sits below the lowest API
	// floor (command tooling lives in cmd/internal/, test drivers in
	// interop/).
	for p, imps := range importedBy {
		if strings.HasPrefix(p, "internal/") && layer[p] >= layer["mooncake/transfer"] {
			t.Errorf("%s is imported (by %s) but sits on floor %d, at or above the APIs' floor %d: only what lies under the APIs belongs in internal/",
				p, strings.Join(imps, ", "), layer[p], layer["mooncake/transfer"])
		}
	}
	for p := range layer {
		if !seen[p] && !planned[p] {
			t.Errorf("docs/architecture.md lists %s, which is not a package in any build", p)
		}
	}
}
