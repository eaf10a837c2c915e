package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/internal/genfile"
)

func root(t *testing.T) string {
	t.Helper()
	r, err := genfile.Root()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGeneratedFilesAreCurrent fails when codes.tsv changed and go generate
// was not run, or when a generated file was edited by hand.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	if err := genfile.Current(generate, 2+len(goTargets), "./internal/codes"); err != nil {
		t.Error(err)
	}
}

func TestParseTableRefusesBadRows(t *testing.T) {
	cases := map[string]string{
		"columns":     "store\t-1\tX\n",
		"value":       "store\tx\tX\tX\tdoc\n",
		"space":       "nope\t-1\tX\tX\tdoc\n",
		"ident":       "store\t-1\tX\tnot ok\tdoc\n",
		"dup value":   "store\t-1\tA\tA\tdoc\nstore\t-1\tB\tB\tdoc\n",
		"dup go name": "store\t-1\tA\tA\tdoc\nstore\t-2\tB\tA\tdoc\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			f := writeTemp(t, text)
			if _, err := parseTable(f); err == nil {
				t.Fatalf("accepted %q", text)
			}
		})
	}
	f := writeTemp(t, "# comment\n\nstore\t-1\tA\tA\tdoc\nengine\t-1\tERR_A\tA\tdoc\n")
	got, err := parseTable(f)
	if err != nil || len(got) != 2 {
		t.Fatalf("got %v, %v: the same value in two spaces is fine", got, err)
	}
}

func writeTemp(t *testing.T, text string) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.tsv")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestTableMatchesUpstream compares the table with upstream's own headers
// when an upstream source tree is given (make test-native sets
// MOONCAKE_PREFIX and MCGO_REQUIRE_UPSTREAM=1, so there it cannot skip).
// The table is the pinned upstream's (the first mooncake line of
// third_party/mooncake/PIN): against the pin it must match exactly. An
// older upstream (v0.3.12.post1 lacks CHECKSUM_MISMATCH,
// INCOMPLETE_OPLOG_CATCH_UP and NOT_SUPPORTED) may lack codes of the table,
// which the test lists; every code it has must still be in the table with
// its value.
func TestTableMatchesUpstream(t *testing.T) {
	src := os.Getenv("MOONCAKE_PREFIX")
	if src == "" {
		if os.Getenv("MCGO_REQUIRE_UPSTREAM") == "1" {
			t.Fatal("MCGO_REQUIRE_UPSTREAM=1 but MOONCAKE_PREFIX is not set")
		}
		t.Skip("MOONCAKE_PREFIX (an upstream source tree) is not set; make test-native runs this")
	}
	pinned := upstreamIsPinned(t, src)
	f, err := os.Open(filepath.Join(root(t), tablePath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := parseTable(f)
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]struct {
		path  string
		parse func(string) (map[string]int64, error)
	}{
		"store":  {"mooncake-store/include/types.h", parseStoreEnum},
		"engine": {"mooncake-transfer-engine/include/error.h", parseDefines},
		"status": {"mooncake-transfer-engine/include/common/base/status.h", parseStatusEnum},
	}
	for space, h := range headers {
		text, err := os.ReadFile(filepath.Join(src, h.path))
		if err != nil {
			t.Fatalf("%s: %v", space, err)
		}
		up, err := h.parse(string(text))
		if err != nil {
			t.Fatalf("%s: %v", h.path, err)
		}
		ours := map[string]int64{}
		for _, e := range entries {
			if e.Space == space && !e.Ours {
				ours[e.Upstream] = e.Value
			}
		}
		for name, v := range up {
			if w, ok := ours[name]; !ok {
				t.Errorf("%s: upstream has %s = %d, the table does not", space, name, v)
			} else if w != v {
				t.Errorf("%s: %s is %d upstream, %d in the table", space, name, v, w)
			}
		}
		for name := range ours {
			if _, ok := up[name]; !ok {
				if pinned {
					t.Errorf("%s: the table has %s, upstream does not", space, name)
				} else {
					t.Logf("%s: the table has %s, this upstream (not the pin) does not", space, name)
				}
			}
		}
	}
}

// upstreamIsPinned says whether the upstream tree src is at the pinned
// commit (the first mooncake line of third_party/mooncake/PIN). A tree
// whose commit git cannot tell counts as the pin, the strict case.
func upstreamIsPinned(t *testing.T, src string) bool {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root(t), "third_party/mooncake/PIN"))
	if err != nil {
		t.Fatal(err)
	}
	var pin string
	for _, line := range strings.Split(string(text), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "mooncake" {
			pin = f[2]
			break
		}
	}
	if pin == "" {
		t.Fatal("third_party/mooncake/PIN has no mooncake line")
	}
	out, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Logf("the commit of %s is unknown (%v): compared as the pin", src, err)
		return true
	}
	head := strings.TrimSpace(string(out))
	if head != pin {
		t.Logf("upstream %s is at %s, not the pin %s", src, head, pin)
	}
	return head == pin
}

var (
	lineComment = regexp.MustCompile(`//[^\n]*`)
	enumEntry   = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(-?\d+)`)
	defineLine  = regexp.MustCompile(`(?m)^#define\s+(ERR_[A-Z0-9_]+)\s+\(?(-?\d+)\)?`)
)

// enumBody returns the text between the braces of the enum that starts
// with decl, comments removed.
func enumBody(text, decl string) (string, error) {
	i := strings.Index(text, decl)
	if i < 0 {
		return "", errNotFound(decl)
	}
	text = text[i:]
	open, end := strings.IndexByte(text, '{'), strings.Index(text, "};")
	if open < 0 || end < open {
		return "", errNotFound(decl + " {...}")
	}
	return lineComment.ReplaceAllString(text[open+1:end], ""), nil
}

func parseEnum(text, decl string) (map[string]int64, error) {
	body, err := enumBody(text, decl)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, m := range enumEntry.FindAllStringSubmatch(body, -1) {
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			return nil, err
		}
		out[m[1]] = v
	}
	return out, nil
}

func parseStoreEnum(text string) (map[string]int64, error) {
	return parseEnum(text, "enum class ErrorCode")
}

func parseStatusEnum(text string) (map[string]int64, error) {
	m, err := parseEnum(text, "enum class Code")
	delete(m, "kMaxCode") // a bound, not a code
	return m, err
}

func parseDefines(text string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, m := range defineLine.FindAllStringSubmatch(text, -1) {
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			return nil, err
		}
		out[m[1]] = v
	}
	if len(out) == 0 {
		return nil, errNotFound("#define ERR_*")
	}
	return out, nil
}

type errNotFound string

func (e errNotFound) Error() string { return string(e) + " not found" }
