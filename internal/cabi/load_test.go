//go:build cgo

package cabi

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fakeNative builds a shared library that exports every function of the
// C ABI as a stub, with the given ABI version and upstream commit: enough
// for the loader, which calls only those two before it installs.
func fakeNative(t *testing.T, abi int, commit string, skip string) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Fatalf("a C compiler is needed (cgo has one): %v", err)
	}
	src, err := os.ReadFile("dispatch_gen.c")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("#include <stdint.h>\n")
	for _, m := range regexp.MustCompile(`"(mcgo_[a-z0-9_]+)",`).FindAllStringSubmatch(string(src), -1) {
		switch name := m[1]; name {
		case skip:
		case "mcgo_abi_version":
			b.WriteString("uint32_t mcgo_abi_version(void) { return " + strconv.Itoa(abi) + "; }\n")
		case "mcgo_backend_name":
			b.WriteString("const char *mcgo_backend_name(void) { return \"fake\"; }\n")
		case "mcgo_upstream_commit":
			b.WriteString("const char *mcgo_upstream_commit(void) { return \"" + commit + "\"; }\n")
		default:
			b.WriteString("int " + name + "(void) { return -1; }\n")
		}
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "fake.c")
	so := filepath.Join(dir, "libfake.so")
	if err := os.WriteFile(c, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	return so
}

// TestLoadNativeRefusals: every library the loader must refuse is refused
// with its typed error, and the process keeps the backend it had.
func TestLoadNativeRefusals(t *testing.T) {
	before, pathBefore := BackendName(), NativePath()
	text := filepath.Join(t.TempDir(), "not-a-library.so")
	if err := os.WriteFile(text, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	var anyCommit string
	for c := range acceptedUpstream {
		anyCommit = c
	}
	for _, tc := range []struct {
		name string
		path string
		any  bool
		want error
	}{
		{"no path", "", false, ErrNativeLibrary},
		{"NUL in the path", "a\x00b", false, ErrNativeLibrary},
		{"no such file", filepath.Join(t.TempDir(), "missing.so"), false, ErrNativeLibrary},
		{"not a shared library", text, false, ErrNativeLibrary},
		{"a function missing", fakeNative(t, ABIVersion, anyCommit, "mcgo_store_put"), false, ErrNativeLibrary},
		{"another ABI", fakeNative(t, ABIVersion-1, anyCommit, ""), false, ErrNativeABI},
		{"an untested upstream", fakeNative(t, ABIVersion, "0123456789abcdef0123456789abcdef01234567", ""), false, ErrNativeUpstream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := LoadNative(tc.path, tc.any)
			if !errors.Is(err, tc.want) {
				t.Errorf("%v, want %v", err, tc.want)
			}
			if got, path := BackendName(), NativePath(); got != before || path != pathBefore {
				t.Errorf("after a refused library the backend is %q (%q), want %q (%q)", got, path, before, pathBefore)
			}
		})
	}
}

// TestLoadNativeInstalls runs in a child process (the library it loads
// becomes the process's backend): a library of this ABI loads (with
// AnyUpstream for its untested commit), takes every call, makes calls
// yield, and is the process's backend for good once a handle is about to
// be made (CheckABI).
func TestLoadNativeInstalls(t *testing.T) {
	if lib := os.Getenv("MCGO_TEST_FAKE_NATIVE"); lib != "" {
		if err := LoadNative(lib, false); !errors.Is(err, ErrNativeUpstream) {
			t.Fatalf("untested upstream: %v", err)
		}
		if err := LoadNative(lib, true); err != nil {
			t.Fatalf("with AnyUpstream: %v", err)
		}
		if BackendName() != "fake" || NativePath() != lib || !yields.Load() {
			t.Fatalf("backend %q, path %q, yields %v", BackendName(), NativePath(), yields.Load())
		}
		if err := LoadNative(lib, true); err != nil {
			t.Fatalf("the same library again: %v", err)
		}
		if err := CheckABI(); err != nil {
			t.Fatal(err)
		}
		if err := LoadNative(lib+".other", true); !errors.Is(err, ErrBackendInUse) {
			t.Fatalf("another library after CheckABI: %v, want ErrBackendInUse", err)
		}
		return
	}
	lib := fakeNative(t, ABIVersion, "0123456789abcdef0123456789abcdef01234567", "")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLoadNativeInstalls$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "MCGO_TEST_FAKE_NATIVE="+lib)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
