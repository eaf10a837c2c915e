package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The dispatch table: every function of the C ABI is called through one
// table of function pointers, filled with the backend linked into the
// program (the embedded engine, or libmcgo_native with -tags
// mooncake_native) or, at run time, with the functions of a
// libmcgo_native.so that internal/cabi loads with dlopen. The Go
// declarations keep calling C.mcgo_*: dispatch_gen.h, which their
// preambles include instead of the ABI headers, turns each name into a
// static inline function that calls through the table (one indirect call).

// cfunc is one function the headers declare.
type cfunc struct {
	Ret    string   // return type, "void" for none
	Name   string   // mcgo_...
	Params []string // each parameter as declared ("const char *key")
	Names  []string // each parameter's name
}

// Field is the function's name in the table: its name without mcgo_.
func (f cfunc) Field() string { return strings.TrimPrefix(f.Name, "mcgo_") }

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	preprocessor = regexp.MustCompile(`(?m)^[ \t]*#.*$`)
	externC      = regexp.MustCompile(`extern\s*"C"\s*\{`)
	declRE       = regexp.MustCompile(`(?s)^(.*?)\b(mcgo_[A-Za-z0-9_]+)\s*\((.*)\)$`)
	paramName    = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\])?$`)
	spaces       = regexp.MustCompile(`\s+`)
)

// headerDecls returns the functions the headers in dir declare, by name:
// every file-scope declaration of an mcgo_ function that is not static
// (static inline helpers are not part of the ABI a backend implements).
func headerDecls(dir string) ([]cfunc, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.h"))
	if err != nil {
		return nil, err
	}
	seen := map[string]cfunc{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		text := blockComment.ReplaceAllString(string(data), " ")
		text = lineComment.ReplaceAllString(text, "")
		text = preprocessor.ReplaceAllString(text, "")
		text = externC.ReplaceAllString(text, ";")
		var bad error
		// File-scope statements end at ';', at a '{' that opens a body and
		// at the '}' that closes it; text inside braces is skipped.
		depth := 0
		var stmt strings.Builder
		end := func() {
			s := strings.TrimSpace(spaces.ReplaceAllString(stmt.String(), " "))
			stmt.Reset()
			if strings.HasPrefix(s, "static") || strings.HasPrefix(s, "typedef") {
				return
			}
			m := declRE.FindStringSubmatch(s)
			if m == nil {
				return
			}
			f, err := parseDecl(m[1], m[2], m[3])
			if err != nil && bad == nil {
				bad = fmt.Errorf("%s: %w", filepath.Base(p), err)
			}
			seen[f.Name] = f
		}
		for _, c := range text {
			switch {
			case c == '{':
				if depth == 0 {
					end()
				}
				depth++
			case c == '}':
				if depth > 0 { // the '}' of extern "C" has no '{' left
					depth--
				}
			case depth > 0:
			case c == ';':
				end()
			default:
				stmt.WriteRune(c)
			}
		}
		end()
		if bad != nil {
			return nil, bad
		}
	}
	out := make([]cfunc, 0, len(seen))
	for _, f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// parseDecl reads one prototype: every parameter must be named, since the
// dispatch wrapper forwards them by name.
func parseDecl(ret, name, params string) (cfunc, error) {
	f := cfunc{Ret: strings.TrimSpace(ret), Name: name}
	params = strings.TrimSpace(params)
	if params == "void" || params == "" {
		return f, nil
	}
	for _, p := range strings.Split(params, ",") {
		p = strings.TrimSpace(p)
		if strings.Contains(p, "(") {
			return f, fmt.Errorf("%s: parameter %q: function pointers are not forwarded", name, p)
		}
		m := paramName.FindStringSubmatch(p)
		if m == nil || strings.TrimSpace(p) == m[1] || isTypeWord(m[1]) {
			return f, fmt.Errorf("%s: parameter %q has no name", name, p)
		}
		f.Params = append(f.Params, p)
		f.Names = append(f.Names, m[1])
	}
	return f, nil
}

func isTypeWord(s string) bool {
	switch s {
	case "int", "char", "void", "size_t", "uint64_t", "int64_t", "uint32_t", "int32_t", "uintptr_t", "const":
		return true
	}
	return false
}

// headerFunctions returns the names of the functions the headers declare.
func headerFunctions(dir string) ([]string, error) {
	decls, err := headerDecls(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(decls))
	for i, f := range decls {
		out[i] = f.Name
	}
	return out, nil
}

// abiHeaders are the headers that declare the ABI, included in this order.
var abiHeaders = []string{"mcgo/common.h", "mcgo/transfer.h", "mcgo/store.h"}

const dispatchHeader = "internal/cabi/dispatch_gen.h"
const dispatchTable = "internal/cabi/dispatch_table_gen.h"
const dispatchSource = "internal/cabi/dispatch_gen.c"

// dispatchFiles generates the dispatch header, the table's type and the
// table with its loader.
func dispatchFiles(root string) (map[string][]byte, error) {
	decls, err := headerDecls(filepath.Join(root, "cgo/include/mcgo"))
	if err != nil {
		return nil, err
	}
	const head = "/* Code generated by internal/cabi/gen from cgo/include/mcgo/*.h; DO NOT EDIT. */\n"

	var t bytes.Buffer
	t.WriteString(head)
	t.WriteString(`/* The dispatch table's type: one pointer per function of the C ABI. */
#ifndef MCGO_DISPATCH_TABLE_GEN_H
#define MCGO_DISPATCH_TABLE_GEN_H

struct mcgo_fns {
`)
	for _, f := range decls {
		fmt.Fprintf(&t, "  %s (*%s)(%s);\n", f.Ret, f.Field(), paramList(f))
	}
	t.WriteString("};\n\n")
	fmt.Fprintf(&t, "#define MCGO_DISPATCH_COUNT %d\n\n", len(decls))
	t.WriteString("#endif\n")

	var h bytes.Buffer
	h.WriteString(head)
	h.WriteString(`/* What the Go declarations (internal/cabi, cstore, ctransfer) include
 * instead of the ABI headers: their types and constants as they are, and
 * each function as a static inline call through the dispatch table
 * (internal/cabi/dispatch_gen.c), so that the backend can be chosen at run
 * time. The headers' own declarations are renamed out of the way. */
#ifndef MCGO_DISPATCH_GEN_H
#define MCGO_DISPATCH_GEN_H

`)
	for _, f := range decls {
		fmt.Fprintf(&h, "#define %s mcgo_declared_%s\n", f.Name, f.Field())
	}
	for _, inc := range abiHeaders {
		fmt.Fprintf(&h, "#include %q\n", inc)
	}
	for _, f := range decls {
		fmt.Fprintf(&h, "#undef %s\n", f.Name)
	}
	h.WriteString("\n#include \"dispatch_table_gen.h\"\n\nextern struct mcgo_fns mcgo_fns;\n\n")
	for _, f := range decls {
		ret := "return "
		if f.Ret == "void" {
			ret = ""
		}
		fmt.Fprintf(&h, "static inline %s %s(%s) { %smcgo_fns.%s(%s); }\n", f.Ret, f.Name, paramList(f), ret, f.Field(), strings.Join(f.Names, ", "))
	}
	h.WriteString("\n#endif\n")

	var c bytes.Buffer
	c.WriteString(head)
	c.WriteString(`/* The dispatch table, filled with the backend linked into the program, and
 * the loader that refills it from a libmcgo_native.so (mcgo_dispatch_load). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

`)
	for _, inc := range abiHeaders {
		fmt.Fprintf(&c, "#include %q\n", inc)
	}
	c.WriteString(`#include "dispatch_table_gen.h"
#include "dispatch_load.h"

struct mcgo_fns mcgo_fns = {
`)
	for _, f := range decls {
		fmt.Fprintf(&c, "    %s,\n", f.Name)
	}
	c.WriteString(`};

static const char *const mcgo_fn_names[MCGO_DISPATCH_COUNT] = {
`)
	for _, f := range decls {
		fmt.Fprintf(&c, "    %q,\n", f.Name)
	}
	c.WriteString(`};

int mcgo_dispatch_open(const char *path, struct mcgo_fns *t, char *err, size_t errlen) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    snprintf(err, errlen, "%s", dlerror());
    return MCGO_DISPATCH_NO_LIBRARY;
  }
  void **slot = (void **)t;
  for (int i = 0; i < MCGO_DISPATCH_COUNT; i++) {
    void *p = dlsym(h, mcgo_fn_names[i]);
    if (p == NULL) {
      snprintf(err, errlen, "it has no %s: not a libmcgo_native of this ABI", mcgo_fn_names[i]);
      dlclose(h);
      return MCGO_DISPATCH_NO_SYMBOL;
    }
    slot[i] = p;
  }
  if (t->abi_version() != MCGO_ABI_VERSION) {
    snprintf(err, errlen, "it implements ABI %u, this program ABI %u", (unsigned)t->abi_version(),
             (unsigned)MCGO_ABI_VERSION);
    dlclose(h);
    return MCGO_DISPATCH_ABI;
  }
  /* The library stays loaded for the life of the process, installed or
   * not: its functions may be in t. */
  return 0;
}

const char *mcgo_dispatch_upstream(const struct mcgo_fns *t) { return t->upstream_commit(); }

void mcgo_dispatch_install(const struct mcgo_fns *t) { mcgo_fns = *t; }
`)

	var pin bytes.Buffer
	pin.WriteString("// Code generated by internal/cabi/gen from third_party/mooncake/PIN; DO NOT EDIT.\n\npackage cabi\n\n")
	pin.WriteString("// acceptedUpstream are the upstream commits the native backend is tested\n// against: a libmcgo_native.so built against another is refused unless\n// the caller accepts any (LoadNative).\nvar acceptedUpstream = map[string]string{\n")
	commits, err := pinned(filepath.Join(root, "third_party/mooncake/PIN"))
	if err != nil {
		return nil, err
	}
	for _, p := range commits {
		fmt.Fprintf(&pin, "\t%q: %q,\n", p[1], p[0])
	}
	pin.WriteString("}\n")
	return map[string][]byte{
		dispatchHeader:             h.Bytes(),
		dispatchTable:              t.Bytes(),
		dispatchSource:             c.Bytes(),
		"internal/cabi/pin_gen.go": pin.Bytes(),
	}, nil
}

func paramList(f cfunc) string {
	if len(f.Params) == 0 {
		return "void"
	}
	return strings.Join(f.Params, ", ")
}

// pinned reads the mooncake rows of the PIN file: (version label, commit).
// A row is "mooncake <repository> <commit> [<label>]".
func pinned(path string) ([][2]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out [][2]string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "mooncake" {
			continue
		}
		label := f[2][:8]
		if len(f) > 3 {
			label = f[3]
		}
		out = append(out, [2]string{label, f[2]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no mooncake row", path)
	}
	return out, sc.Err()
}
