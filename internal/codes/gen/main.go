// Command gen turns internal/codes/codes.tsv, the one table of error codes,
// into the files that use it: the values and names of package codes, the
// exported constants of the Go packages that have a code type, and the C
// defines of cgo/include/mcgo/codes.h. Run it with go generate
// ./internal/codes; TestGeneratedFilesAreCurrent fails when a file is stale.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// Entry is one row of the table.
type Entry struct {
	Space    string // "store", "engine" or "status"
	Ours     bool   // a code of our transfer ABI that upstream's ERR_* lacks ("engine+" in the table)
	Value    int64
	Upstream string // upstream's enumerator or macro name
	Go       string // the Go name without a package prefix
	Doc      string
}

// spaces lists the code spaces in table order, with what package codes
// calls them.
var spaces = []struct {
	name, prefix, source, note string
}{
	{"store", "Store", "mooncake::ErrorCode (mooncake-store/include/types.h)", "the store's codes, 0 or negative"},
	{"engine", "Engine", "the transfer engine's ERR_* (mooncake-transfer-engine/include/error.h)", "returned by its int calls, negative"},
	{"status", "Status", "the transfer engine's Status::Code (include/common/base/status.h)", "returned by submit, status and free calls, 0 or positive"},
}

// goTarget is a Go package that exports a typed constant per code of one
// space.
type goTarget struct {
	path     string // file, relative to the module root
	pkg      string
	space    string
	typeName string
	prefix   string // of every constant but the zero one
	zeroName string // name of the 0 constant, "" to leave it out
}

var goTargets = []goTarget{
	{path: "mooncake/codes_gen.go", pkg: "mooncake", space: "store", typeName: "ErrorCode", prefix: "Err", zeroName: "CodeOK"},
	{path: "mooncake/transfer/codes_gen.go", pkg: "transfer", space: "engine", typeName: "ErrorCode", prefix: "Err"},
}

const (
	tablePath = "internal/codes/codes.tsv"
	codesPath = "internal/codes/codes_gen.go"
	headerC   = "cgo/include/mcgo/codes.h"
)

func main() {
	root, err := moduleRoot()
	if err == nil {
		err = write(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "codes/gen:", err)
		os.Exit(1)
	}
}

func write(root string) error {
	files, err := generate(root)
	if err != nil {
		return err
	}
	for path, data := range files {
		if err := os.WriteFile(filepath.Join(root, path), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate returns every generated file by its path under root.
func generate(root string) (map[string][]byte, error) {
	f, err := os.Open(filepath.Join(root, tablePath))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := parseTable(f)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	if out[codesPath], err = codesFile(entries); err != nil {
		return nil, err
	}
	for _, t := range goTargets {
		if out[t.path], err = targetFile(t, entries); err != nil {
			return nil, err
		}
	}
	if _, err := statusPairs(entries); err != nil {
		return nil, err
	}
	out[headerC] = cHeader(entries)
	return out, nil
}

func moduleRoot() (string, error) {
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

// parseTable reads the tab-separated table and checks that every space is
// known and no space repeats a value, an upstream name or a Go name.
func parseTable(r *os.File) ([]Entry, error) {
	var out []Entry
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 5 {
			return nil, fmt.Errorf("%s:%d: %d columns, want 5", tablePath, line, len(f))
		}
		v, err := strconv.ParseInt(f[1], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: value %q: %v", tablePath, line, f[1], err)
		}
		e := Entry{Space: f[0], Value: v, Upstream: f[2], Go: f[3], Doc: f[4]}
		if e.Space == "engine+" {
			e.Space, e.Ours = "engine", true
		}
		if spaceIndex(e.Space) < 0 {
			return nil, fmt.Errorf("%s:%d: unknown space %q", tablePath, line, e.Space)
		}
		if !isIdent(e.Go) || !isIdent(e.Upstream) {
			return nil, fmt.Errorf("%s:%d: names %q, %q must be identifiers", tablePath, line, e.Upstream, e.Go)
		}
		for _, k := range []string{"v" + f[1], "u" + e.Upstream, "g" + e.Go} {
			if seen[e.Space+k] {
				return nil, fmt.Errorf("%s:%d: %s repeats %s", tablePath, line, e.Space, k[1:])
			}
			seen[e.Space+k] = true
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

func spaceIndex(s string) int {
	for i, sp := range spaces {
		if sp.name == s {
			return i
		}
	}
	return -1
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

const header = "// Code generated by internal/codes/gen from internal/codes/codes.tsv; DO NOT EDIT.\n\n"

func codesFile(entries []Entry) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("package codes\n\n")
	for _, sp := range spaces {
		fmt.Fprintf(&b, "// %s codes: %s, %s.\nconst (\n", sp.prefix, sp.source, sp.note)
		for _, e := range entries {
			if e.Space == sp.name {
				fmt.Fprintf(&b, "\t%s%s = %d // %s\n", sp.prefix, e.Go, e.Value, e.Upstream)
			}
		}
		b.WriteString(")\n\n")
	}
	for _, sp := range spaces {
		fmt.Fprintf(&b, "var %sEntries = [...]Entry{\n", strings.ToLower(sp.prefix))
		for _, e := range entries {
			if e.Space == sp.name {
				fmt.Fprintf(&b, "\t{%d, %q, %q, %q},\n", e.Value, e.Upstream, e.Go, e.Doc)
			}
		}
		b.WriteString("}\n\n")
	}
	for _, sp := range spaces {
		fmt.Fprintf(&b, "// %sName returns upstream's name of a %s code, or \"\" for an unknown value.\n", sp.prefix, sp.name)
		fmt.Fprintf(&b, "func %sName(v int64) string {\n\tswitch v {\n", sp.prefix)
		for _, e := range entries {
			if e.Space == sp.name {
				fmt.Fprintf(&b, "\tcase %d:\n\t\treturn %q\n", e.Value, e.Upstream)
			}
		}
		b.WriteString("\t}\n\treturn \"\"\n}\n\n")
	}
	b.WriteString(statusMapGo(entries))
	return format.Source(b.Bytes())
}

// statusPairs maps every status code to the engine code of the same Go
// name: the transfer ABI reports one set of codes, the engine's.
func statusPairs(entries []Entry) ([][2]int64, error) {
	byName := map[string]int64{}
	for _, e := range entries {
		if e.Space == "engine" {
			byName[e.Go] = e.Value
		}
	}
	var out [][2]int64
	for _, e := range entries {
		if e.Space != "status" || e.Value == 0 {
			continue
		}
		v, ok := byName[e.Go]
		if !ok {
			return nil, fmt.Errorf("status %s has no engine code named %s", e.Upstream, e.Go)
		}
		out = append(out, [2]int64{e.Value, v})
	}
	return out, nil
}

func statusMapGo(entries []Entry) string {
	pairs, _ := statusPairs(entries)
	var b strings.Builder
	b.WriteString("// EngineFromStatus maps a Status::Code to the engine code of the same\n// name (0 stays 0; an unknown status gives EngineInternal).\n")
	b.WriteString("func EngineFromStatus(v int64) int64 {\n\tswitch v {\n\tcase 0:\n\t\treturn 0\n")
	for _, p := range pairs {
		fmt.Fprintf(&b, "\tcase %d:\n\t\treturn %d\n", p[0], p[1])
	}
	b.WriteString("\t}\n\treturn EngineInternal\n}\n")
	return b.String()
}

func targetFile(t goTarget, entries []Entry) ([]byte, error) {
	sp := spaces[spaceIndex(t.space)]
	var b bytes.Buffer
	b.WriteString(header)
	fmt.Fprintf(&b, "package %s\n\n", t.pkg)
	fmt.Fprintf(&b, "// Error codes: the values of %s, kept exactly.\nconst (\n", sp.source)
	for _, e := range entries {
		if e.Space != t.space {
			continue
		}
		name := t.prefix + e.Go
		if e.Value == 0 {
			if t.zeroName == "" {
				continue
			}
			name = t.zeroName
		}
		what := e.Upstream
		if e.Ours {
			what += " (ours; upstream has no such code)"
		}
		fmt.Fprintf(&b, "\t// %s is %s: %s\n\t%s %s = %d\n", name, what, e.Doc, name, t.typeName, e.Value)
	}
	b.WriteString(")\n")
	return format.Source(b.Bytes())
}

func cHeader(entries []Entry) []byte {
	var b bytes.Buffer
	b.WriteString("/* Code generated by internal/codes/gen from internal/codes/codes.tsv; DO NOT EDIT.\n")
	b.WriteString(" *\n * Every error code of mooncake-go's C ABI, in Mooncake's own values:\n")
	b.WriteString(" *   MCGO_<NAME>            mooncake::ErrorCode (store calls)\n")
	b.WriteString(" *   MCGO_TE_<ERR_NAME>     the transfer engine's ERR_* (its int calls)\n")
	b.WriteString(" *   MCGO_TE_STATUS_<NAME>  the transfer engine's Status::Code\n */\n")
	b.WriteString("#ifndef MCGO_CODES_H_\n#define MCGO_CODES_H_\n\n#include <stdint.h>\n")
	for _, sp := range spaces {
		b.WriteString("\n")
		for _, e := range entries {
			if e.Space != sp.name {
				continue
			}
			var name string
			switch sp.name {
			case "store":
				name = "MCGO_" + e.Upstream
			case "engine":
				name = "MCGO_TE_" + e.Upstream
			default:
				name = "MCGO_TE_STATUS_" + upperSnake(strings.TrimPrefix(e.Upstream, "k"))
			}
			val := strconv.FormatInt(e.Value, 10)
			if e.Value < 0 {
				val = "(" + val + ")"
			}
			fmt.Fprintf(&b, "#define %s %s\n", name, val)
		}
	}
	pairs, _ := statusPairs(entries)
	b.WriteString("\n/* The transfer ABI reports one set of codes, the engine's: a Status::Code\n * maps to the engine code of the same name. */\n")
	b.WriteString("static inline int32_t mcgo_te_code_from_status(int32_t status) {\n  switch (status) {\n    case 0: return 0;\n")
	for _, p := range pairs {
		fmt.Fprintf(&b, "    case %d: return %d;\n", p[0], p[1])
	}
	b.WriteString("    default: return MCGO_TE_ERR_INTERNAL;\n  }\n}\n")
	b.WriteString("\n#endif /* MCGO_CODES_H_ */\n")
	return b.Bytes()
}

// upperSnake turns "InvalidArgument" into "INVALID_ARGUMENT".
func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
