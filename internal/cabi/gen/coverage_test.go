package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/internal/genfile"
)

// casesTable ties every function of the C ABI to the conformance cases
// that exercise it.
const casesTable = "internal/cabi/conformance.tsv"

// suites are the conformance suites a row may name: the package and the
// variable that lists its cases ({"Name", fn} elements).
var suites = map[string]struct{ dir, list string }{
	"store":    {"mooncake/mooncaketest", "conformanceTests"},
	"transfer": {"mooncake/transfer/transfertest", "cases"},
}

// TestEveryABIFunctionIsCovered fails when a function declared in
// cgo/include/mcgo/*.h has no Go declaration (a call of it in a package of
// internal/cabi, reached from an exported function), no no-cgo stub of
// that function, or no conformance case in internal/cabi/conformance.tsv;
// and when that table names a function the headers do not declare or a
// case that does not exist.
func TestEveryABIFunctionIsCovered(t *testing.T) {
	r, err := genfile.Root()
	if err != nil {
		t.Fatal(err)
	}
	declared, err := headerFunctions(filepath.Join(r, "cgo/include/mcgo"))
	if err != nil {
		t.Fatal(err)
	}
	if len(declared) < 70 {
		t.Fatalf("found only %d functions in the headers: is the parser broken?", len(declared))
	}
	goDecls, err := goDeclarations(r)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readCasesTable(filepath.Join(r, casesTable))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]map[string]bool{}
	for name, s := range suites {
		if cases[name], err = suiteCases(filepath.Join(r, s.dir), s.list); err != nil {
			t.Fatalf("suite %s: %v", name, err)
		}
	}
	for _, fn := range declared {
		roots := goDecls[fn]
		switch {
		case roots == nil:
			t.Errorf("%s: no Go declaration calls it (internal/cabi/...)", fn)
		case len(roots.exported) == 0:
			t.Errorf("%s: called only from unexported Go functions %v", fn, roots.callers)
		}
		for _, e := range roots.exportedList() {
			if !roots.stubs[e] {
				t.Errorf("%s: %s.%s has no no-cgo stub (run go generate ./internal/cabi)", fn, roots.pkg, e)
			}
		}
		row, ok := rows[fn]
		switch {
		case !ok:
			t.Errorf("%s: no row in %s: name the conformance cases that exercise it", fn, casesTable)
		case row.none:
			t.Logf("%s: no conformance case yet: %s", fn, row.why)
		}
	}
	known := map[string]bool{}
	for _, fn := range declared {
		known[fn] = true
	}
	for fn, row := range rows {
		if !known[fn] {
			t.Errorf("%s (%s line %d): the headers declare no such function", fn, casesTable, row.line)
		}
		for _, c := range row.cases {
			suite, name, _ := strings.Cut(c, "/")
			if cases[suite] == nil {
				t.Errorf("%s (%s line %d): %q: no suite %q", fn, casesTable, row.line, c, suite)
			} else if !cases[suite][name] {
				t.Errorf("%s (%s line %d): suite %s has no case %q", fn, casesTable, row.line, suite, name)
			}
		}
	}
}

type casesRow struct {
	line  int
	cases []string // suite/Case
	none  bool     // "-": no case yet
	why   string
}

func readCasesTable(path string) (map[string]casesRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]casesRow{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) < 2 || len(cols) > 3 {
			return nil, fmt.Errorf("%s:%d: want function<TAB>cases[<TAB>why]", path, line)
		}
		fn := cols[0]
		if _, dup := out[fn]; dup {
			return nil, fmt.Errorf("%s:%d: %s has a second row", path, line, fn)
		}
		row := casesRow{line: line}
		if cols[1] == "-" {
			if len(cols) != 3 || strings.TrimSpace(cols[2]) == "" {
				return nil, fmt.Errorf("%s:%d: %s has no case: say why in a third column", path, line, fn)
			}
			row.none, row.why = true, cols[2]
		} else {
			row.cases = strings.Fields(cols[1])
			if len(row.cases) == 0 || len(cols) == 3 {
				return nil, fmt.Errorf("%s:%d: want function<TAB>suite/Case ...", path, line)
			}
		}
		out[fn] = row
	}
	return out, sc.Err()
}

// decl is where a C function is declared on the Go side.
type decl struct {
	pkg      string          // the package's directory
	callers  []string        // the functions whose bodies call it
	exported map[string]bool // the nearest exported functions that reach it
	stubs    map[string]bool // the functions of the package's stub file
}

func (d *decl) exportedList() []string {
	if d == nil {
		return nil
	}
	var out []string
	for e := range d.exported {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// goDeclarations finds, in every package of targets, the calls C.mcgo_*(...)
// and the nearest exported functions that reach them (the caller itself,
// or the exported functions above an unexported one, through the package's
// own functions matched by name), with the package's stubs.
func goDeclarations(root string) (map[string]*decl, error) {
	out := map[string]*decl{}
	for _, t := range targets {
		dir := filepath.Join(root, t.dir)
		fset := token.NewFileSet()
		paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, err
		}
		funcs := map[string]*ast.FuncDecl{} // by funcKey
		byName := map[string][]string{}     // simple name -> keys
		stubs := map[string]bool{}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return nil, err
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if filepath.Base(p) == stubFile {
					stubs[funcKey(fd)] = true
					continue
				}
				funcs[funcKey(fd)] = fd
				byName[fd.Name.Name] = append(byName[fd.Name.Name], funcKey(fd))
			}
		}
		// calledBy[k] lists the functions whose bodies call k.
		calledBy := map[string][]string{}
		cCalls := map[string][]string{} // mcgo_ function -> callers
		for key, fd := range funcs {
			if fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fn := call.Fun.(type) {
				case *ast.SelectorExpr:
					if x, ok := fn.X.(*ast.Ident); ok && x.Name == "C" && strings.HasPrefix(fn.Sel.Name, "mcgo_") {
						cCalls[fn.Sel.Name] = append(cCalls[fn.Sel.Name], key)
						return true
					}
					for _, k := range byName[fn.Sel.Name] {
						calledBy[k] = append(calledBy[k], key)
					}
				case *ast.Ident:
					for _, k := range byName[fn.Name] {
						calledBy[k] = append(calledBy[k], key)
					}
				}
				return true
			})
		}
		for cfn, callers := range cCalls {
			if out[cfn] != nil {
				return nil, fmt.Errorf("%s is called from %s and %s", cfn, out[cfn].pkg, t.dir)
			}
			d := &decl{pkg: t.dir, callers: callers, exported: map[string]bool{}, stubs: stubs}
			seen := map[string]bool{}
			var walk func(k string)
			walk = func(k string) {
				if seen[k] {
					return
				}
				seen[k] = true
				if isExported(funcs[k]) {
					d.exported[k] = true // the declaration: callers above it use it
					return
				}
				for _, c := range calledBy[k] {
					walk(c)
				}
			}
			for _, c := range callers {
				walk(c)
			}
			out[cfn] = d
		}
	}
	return out, nil
}

func isExported(fd *ast.FuncDecl) bool {
	if fd == nil || !fd.Name.IsExported() {
		return false
	}
	return fd.Recv == nil || ast.IsExported(recvType(fd))
}

// suiteCases returns the case names of a conformance suite: the string
// that starts each element of the variable list.
func suiteCases(dir, list string) (map[string]bool, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	out := map[string]bool{}
	for _, p := range [][]*ast.File{files} {
		for _, f := range p {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					if len(vs.Names) != 1 || vs.Names[0].Name != list || len(vs.Values) != 1 {
						continue
					}
					lit, ok := vs.Values[0].(*ast.CompositeLit)
					if !ok {
						return nil, fmt.Errorf("%s is not a composite literal", list)
					}
					for _, e := range lit.Elts {
						el, ok := e.(*ast.CompositeLit)
						if !ok || len(el.Elts) == 0 {
							return nil, fmt.Errorf("%s: an element is not {\"Name\", fn}", list)
						}
						b, ok := el.Elts[0].(*ast.BasicLit)
						if !ok || b.Kind != token.STRING {
							return nil, fmt.Errorf("%s: an element does not start with its name", list)
						}
						name, err := strconv.Unquote(b.Value)
						if err != nil {
							return nil, err
						}
						out[name] = true
					}
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cases in var %s of %s", list, dir)
	}
	return out, nil
}

func TestHeaderFunctions(t *testing.T) {
	dir := t.TempDir()
	header := `/* mcgo_in_comment(void); */
#ifndef X_H_
#define MCGO_MACRO(x) mcgo_macro(x)
#ifdef __cplusplus
extern "C" {
#endif
typedef struct mcgo_thing { int (*mcgo_field)(void); } mcgo_thing;
typedef int32_t (*mcgo_callback)(void *);
// mcgo_line_comment(void);
int32_t mcgo_one(mcgo_thing *t,
                 const char *key);
const char *mcgo_two(void);
static inline int32_t mcgo_helper(int32_t x) { return mcgo_one(0, 0) + x; }
void mcgo_three(void);
#ifdef __cplusplus
} /* extern "C" */
#endif
#endif
`
	if err := os.WriteFile(filepath.Join(dir, "x.h"), []byte(header), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := headerFunctions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "mcgo_one mcgo_three mcgo_two"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}
