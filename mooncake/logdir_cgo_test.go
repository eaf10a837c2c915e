//go:build cgo

package mooncake_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/mooncaketest"
)

const logDirChild = "MCGO_LOGDIR_CHILD"

// Config.LogDir is chosen once per process (glog), so the test runs in a
// process of its own: this test binary again. There, the native backend
// writes upstream's log into glog files in the directory; the embedded
// engine writes no log. Either way a second directory is refused.
func TestLogDir(t *testing.T) {
	if dir := os.Getenv(logDirChild); dir != "" {
		logDirChildMain(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogDir$", "-test.v")
	cmd.Env = append(os.Environ(), logDirChild+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if mooncake.Backend().Name != "native" {
		if len(files) != 0 {
			t.Errorf("the embedded engine wrote %v", files)
		}
		return
	}
	var logs strings.Builder
	for _, f := range files {
		b, _ := os.ReadFile(f)
		logs.Write(b)
	}
	// glog's files, with lines of upstream's sources ("I20261201 ... x.cpp:12] ...").
	if !regexp.MustCompile(`(?m)^[IWEF]\d{8} [0-9:.]+ +\d+ \w+\.cpp:\d+\] `).MatchString(logs.String()) {
		t.Errorf("no upstream log line in %s (%d files)", dir, len(files))
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "mooncake-go.*INFO*")); len(m) == 0 {
		t.Errorf("no glog INFO file in %s: %v", dir, files)
	}
}

func logDirChildMain(t *testing.T, dir string) {
	c := mooncaketest.NewCluster(t)
	st := c.Open(t, func(cfg *mooncake.Config) { cfg.LogDir, cfg.LogLevel = dir, "info" })
	if _, err := st.Get(mooncaketest.Key(t, "logdir-missing-key")); !errors.Is(err, mooncake.ErrObjectNotFound) {
		t.Fatalf("get: %v", err)
	}
	// The same directory again is fine; another one is refused.
	c.Open(t, func(cfg *mooncake.Config) { cfg.LogDir = dir })
	other := t.TempDir()
	if _, err := mooncake.Open(c.Config(func(cfg *mooncake.Config) { cfg.LogDir = other })); !errors.Is(err, mooncake.ErrInvalidParams) {
		t.Fatalf("a second log directory: %v, want ErrInvalidParams", err)
	}
	if _, err := mooncake.Open(c.Config(func(cfg *mooncake.Config) { cfg.LogLevel = "loud" })); !errors.Is(err, mooncake.ErrInvalidParams) {
		t.Fatalf("a bad level: %v, want ErrInvalidParams", err)
	}
	t.Log("child: ok")
}
