// Command gen writes the no-cgo stubs of the C ABI's Go declarations: for
// each package of internal/cabi, a file nocgo_gen.go (build constraint
// !cgo) that declares everything exported by the package's cgo-only files,
// so that the module builds with CGO_ENABLED=0 and every call fails with
// the package's no-cgo code. Run it with go generate ./internal/cabi;
// TestGeneratedFilesAreCurrent fails when a file is stale.
//
// What a stub is, from the declaration in the cgo build (the embedded
// backend's files; the native build must export the same names):
//
//   - an exported type: opaque, struct{ _ uintptr } (without cgo no value
//     of it is ever valid);
//   - an exported function or method: the same signature, no parameter
//     names, returning the package's no-cgo code for every int32 or int64
//     result (the ABI's codes, and its "value or negative code" results), a
//     message for a string that follows a code ("built without cgo"), and
//     the zero value for everything else;
//   - an exported constant or variable: only with a //nocgo:value directive
//     (its value without cgo), or left out with //nocgo:omit; one with
//     neither is an error, so that none is forgotten.
//
// A function's results can be given instead with a //nocgo:return
// directive in its doc comment: //nocgo:return ABIVersion.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mooncake-go/mooncake-go/internal/genfile"
)

// target is one package that gets a stub file.
type target struct {
	dir        string // relative to the module root
	code       string // the expression of the package's no-cgo code
	codeImport string // the import path code needs, "" for none
}

const modulePath = "github.com/mooncake-go/mooncake-go"

var targets = []target{
	{dir: "internal/cabi", code: "CodeNoCgo"},
	{dir: "internal/cabi/ctransfer", code: "CodeNoCgo"},
	{dir: "internal/cabi/cstore", code: "cabi.CodeNoCgo", codeImport: modulePath + "/internal/cabi"},
}

// stubFile is the name of the generated file in each package.
const stubFile = "nocgo_gen.go"

// message is what a string result that follows a code says.
const message = "built without cgo"

func main() { genfile.Main("cabi/gen", generate) }

// generate returns every generated file by its path under root.
func generate(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, t := range targets {
		data, err := stubs(filepath.Join(root, t.dir), t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.dir, err)
		}
		out[filepath.Join(t.dir, stubFile)] = data
	}
	disp, err := dispatchFiles(root)
	if err != nil {
		return nil, err
	}
	for k, v := range disp {
		out[k] = v
	}
	return out, nil
}

// cgoOnlyFiles returns the files of dir that a build with cgo compiles and
// one without does not, with the given build tags.
func cgoOnlyFiles(dir string, tags ...string) ([]string, error) {
	list := func(cgo bool) (map[string]bool, error) {
		ctx := build.Default
		ctx.CgoEnabled = cgo
		ctx.BuildTags = tags
		p, err := ctx.ImportDir(dir, 0)
		if err != nil {
			return nil, err
		}
		m := map[string]bool{}
		for _, f := range append(slices.Clone(p.GoFiles), p.CgoFiles...) {
			m[f] = true
		}
		return m, nil
	}
	with, err := list(true)
	if err != nil {
		return nil, err
	}
	without, err := list(false)
	if err != nil {
		return nil, err
	}
	var out []string
	for f := range with {
		if !without[f] {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

// pkg is what the stubs of one package are made from.
type pkg struct {
	name    string
	fset    *token.FileSet
	types   map[string]ast.Expr // every type declared in the package, by name
	imports map[string]string   // qualifier -> path, of the cgo-only files
	decls   []ast.Decl          // of the cgo-only files, in file order
}

// load parses dir's cgo-only files (files) and, for the type lookup, every
// other non-test Go file of the package.
func load(dir string, files []string) (*pkg, error) {
	p := &pkg{fset: token.NewFileSet(), types: map[string]ast.Expr{}, imports: map[string]string{}}
	all, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(all)
	for _, path := range all {
		base := filepath.Base(path)
		if strings.HasSuffix(base, "_test.go") || base == stubFile {
			continue
		}
		f, err := parser.ParseFile(p.fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if p.name == "" {
			p.name = f.Name.Name
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					ts := s.(*ast.TypeSpec)
					p.types[ts.Name.Name] = ts.Type
				}
			}
		}
		if !slices.Contains(files, base) {
			continue
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			p.imports[name] = path
		}
		p.decls = append(p.decls, f.Decls...)
	}
	return p, nil
}

// exported lists the exported names the decls declare (methods as
// Type.Method), for comparing the two cgo builds.
func exported(decls []ast.Decl) []string {
	var out []string
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() {
				out = append(out, funcKey(d))
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						out = append(out, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// funcKey is "Recv.Name" for a method, "Name" for a function.
func funcKey(f *ast.FuncDecl) string {
	if r := recvType(f); r != "" {
		return r + "." + f.Name.Name
	}
	return f.Name.Name
}

func recvType(f *ast.FuncDecl) string {
	if f.Recv == nil || len(f.Recv.List) == 0 {
		return ""
	}
	t := f.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// stubs returns the stub file of the package in dir.
func stubs(dir string, t target) ([]byte, error) {
	files, err := cgoOnlyFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no cgo-only files")
	}
	p, err := load(dir, files)
	if err != nil {
		return nil, err
	}
	nativeFiles, err := cgoOnlyFiles(dir, "mooncake_native")
	if err != nil {
		return nil, err
	}
	native, err := load(dir, nativeFiles)
	if err != nil {
		return nil, err
	}
	if a, b := exported(p.decls), exported(native.decls); !slices.Equal(a, b) {
		return nil, fmt.Errorf("the default cgo build exports %v, the native build %v: the stubs mirror one set", a, b)
	}
	g := &gen{pkg: p, t: t, used: map[string]bool{}}
	var body bytes.Buffer
	for _, d := range p.decls {
		if err := g.decl(&body, d); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by internal/cabi/gen from the cgo declarations of %s; DO NOT EDIT.\n\n", t.dir)
	fmt.Fprintf(&out, "// Without cgo no backend is linked: these stubs let the module build with\n")
	fmt.Fprintf(&out, "// CGO_ENABLED=0 (pure-Go packages such as hostcache still work), and every\n")
	fmt.Fprintf(&out, "// call fails with %s.\n\n", t.code)
	fmt.Fprintf(&out, "//go:build !cgo\n\npackage %s\n\n", p.name)
	var std, other []string
	for q := range g.used {
		path := p.imports[q]
		if q == qualifier(t.code) {
			path = t.codeImport
		}
		if path == "" {
			return nil, fmt.Errorf("no import for %s", q)
		}
		if strings.Contains(strings.Split(path, "/")[0], ".") {
			other = append(other, strconv.Quote(path))
		} else {
			std = append(std, strconv.Quote(path))
		}
	}
	sort.Strings(std)
	sort.Strings(other)
	switch imports := append(slices.Clone(std), other...); {
	case len(imports) == 1:
		fmt.Fprintf(&out, "import %s\n\n", imports[0])
	case len(std) > 0 && len(other) > 0:
		fmt.Fprintf(&out, "import (\n%s\n\n%s\n)\n\n", strings.Join(std, "\n"), strings.Join(other, "\n"))
	case len(imports) > 1:
		fmt.Fprintf(&out, "import (\n%s\n)\n\n", strings.Join(imports, "\n"))
	}
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated code does not parse: %w\n%s", err, out.Bytes())
	}
	return src, nil
}

// qualifier returns the package qualifier of an expression such as
// "cabi.CodeNoCgo", or "".
func qualifier(expr string) string {
	if i := strings.IndexByte(expr, '.'); i > 0 {
		return expr[:i]
	}
	return ""
}

type gen struct {
	*pkg
	t    target
	used map[string]bool // qualifiers the stubs use
}

// directive returns the argument of //nocgo:<name> in doc, and whether
// there is one.
func directive(doc *ast.CommentGroup, name string) (string, bool) {
	if doc == nil {
		return "", false
	}
	prefix := "//nocgo:" + name
	for _, c := range doc.List {
		if c.Text == prefix {
			return "", true
		}
		if rest, ok := strings.CutPrefix(c.Text, prefix+" "); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

func (g *gen) decl(w *bytes.Buffer, d ast.Decl) error {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() || (d.Recv != nil && !ast.IsExported(recvType(d))) {
			return nil
		}
		return g.fn(w, d)
	case *ast.GenDecl:
		for _, s := range d.Specs {
			var err error
			switch s := s.(type) {
			case *ast.TypeSpec:
				err = g.typ(w, s)
			case *ast.ValueSpec:
				err = g.value(w, d, s)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gen) typ(w *bytes.Buffer, s *ast.TypeSpec) error {
	if !s.Name.IsExported() {
		return nil
	}
	if _, ok := s.Type.(*ast.StructType); !ok {
		return fmt.Errorf("type %s: only struct types can be stubbed (as opaque structs)", s.Name.Name)
	}
	fmt.Fprintf(w, "// %s is opaque: without cgo none is ever valid.\ntype %s struct{ _ uintptr }\n\n", s.Name.Name, s.Name.Name)
	return nil
}

func (g *gen) value(w *bytes.Buffer, d *ast.GenDecl, s *ast.ValueSpec) error {
	var names []string
	for _, n := range s.Names {
		if n.IsExported() {
			names = append(names, n.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	doc := s.Doc
	if doc == nil && len(d.Specs) == 1 {
		doc = d.Doc
	}
	if _, ok := directive(doc, "omit"); ok {
		return nil
	}
	v, ok := directive(doc, "value")
	if !ok || v == "" {
		return fmt.Errorf("%s %s: no //nocgo:value or //nocgo:omit directive", d.Tok, strings.Join(names, ", "))
	}
	if len(names) != 1 || len(s.Names) != 1 {
		return fmt.Errorf("%s %s: //nocgo:value takes a spec of one name", d.Tok, strings.Join(names, ", "))
	}
	if err := g.useExpr(v); err != nil {
		return fmt.Errorf("%s %s: %w", d.Tok, names[0], err)
	}
	fmt.Fprintf(w, "%s %s = %s\n\n", d.Tok, names[0], v)
	return nil
}

func (g *gen) fn(w *bytes.Buffer, f *ast.FuncDecl) error {
	name := funcKey(f)
	recv := ""
	if f.Recv != nil {
		r, err := g.expr(f.Recv.List[0].Type)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		recv = "(" + r + ") "
	}
	params, err := g.fields(f.Type.Params)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	results, err := g.fields(f.Type.Results)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var values []string
	if v, ok := directive(f.Doc, "return"); ok {
		if err := g.useExpr(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		values = []string{v}
	} else {
		afterCode := false
		for i, r := range results {
			v, err := g.result(r, afterCode)
			if err != nil {
				return fmt.Errorf("%s: result %d: %w", name, i, err)
			}
			afterCode = r == "int32" || r == "int64"
			values = append(values, v)
		}
	}
	res := ""
	switch {
	case len(results) == 1:
		res = " " + results[0]
	case len(results) > 1:
		res = " (" + strings.Join(results, ", ") + ")"
	}
	body := "{}"
	if len(values) > 0 {
		body = "{ return " + strings.Join(values, ", ") + " }"
	}
	fmt.Fprintf(w, "func %s%s(%s)%s %s\n\n", recv, f.Name.Name, strings.Join(params, ", "), res, body)
	return nil
}

// fields returns the types of a parameter or result list, one per value.
func (g *gen) fields(fl *ast.FieldList) ([]string, error) {
	if fl == nil {
		return nil, nil
	}
	var out []string
	for _, f := range fl.List {
		t, err := g.expr(f.Type)
		if err != nil {
			return nil, err
		}
		for range max(len(f.Names), 1) {
			out = append(out, t)
		}
	}
	return out, nil
}

// expr prints a type, recording the qualifiers it uses; a C type is an
// error (the stub could not declare it).
func (g *gen) expr(e ast.Expr) (string, error) {
	var err error
	ast.Inspect(e, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok {
				if id.Name == "C" {
					err = fmt.Errorf("uses the C type C.%s", s.Sel.Name)
				}
				g.used[id.Name] = true
			}
			return false
		}
		return true
	})
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := printer.Fprint(&b, g.fset, e); err != nil {
		return "", err
	}
	return b.String(), nil
}

// useExpr records the qualifiers of a directive's expression list.
func (g *gen) useExpr(src string) error {
	e, err := parser.ParseExpr("f(" + src + ")")
	if err != nil {
		return fmt.Errorf("directive %q: %w", src, err)
	}
	_, err = g.expr(e)
	return err
}

// result returns the stub's value for a result of type typ.
func (g *gen) result(typ string, afterCode bool) (string, error) {
	switch typ {
	case "int32", "int64":
		if q := qualifier(g.t.code); q != "" {
			g.used[q] = true
		}
		return g.t.code, nil
	case "string":
		if afterCode {
			return strconv.Quote(message), nil
		}
		return `""`, nil
	}
	e, err := parser.ParseExpr(typ)
	if err != nil {
		return "", err
	}
	return g.zero(e, typ, 0)
}

// zero returns the zero value of type e (printed as typ).
func (g *gen) zero(e ast.Expr, typ string, depth int) (string, error) {
	if depth > 8 {
		return "", fmt.Errorf("type %s: too deep", typ)
	}
	switch e := e.(type) {
	case *ast.Ident:
		switch e.Name {
		case "bool":
			return "false", nil
		case "string":
			return `""`, nil
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
			"uintptr", "byte", "rune", "float32", "float64":
			return "0", nil
		case "error", "any":
			return "nil", nil
		}
		def, ok := g.types[e.Name]
		if !ok {
			return "", fmt.Errorf("type %s is not declared in the package", e.Name)
		}
		return g.zero(def, typ, depth+1)
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok && id.Name == "unsafe" && e.Sel.Name == "Pointer" {
			return "nil", nil
		}
		return "", fmt.Errorf("type %s: no zero value known for another package's type", typ)
	case *ast.StarExpr, *ast.ArrayType, *ast.MapType, *ast.FuncType, *ast.ChanType, *ast.InterfaceType:
		if a, ok := e.(*ast.ArrayType); ok && a.Len != nil {
			return typ + "{}", nil
		}
		return "nil", nil
	case *ast.StructType:
		return typ + "{}", nil
	}
	return "", fmt.Errorf("type %s: no zero value known", typ)
}
