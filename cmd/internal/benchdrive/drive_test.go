package benchdrive

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mooncake-go/mooncake-go/cmd/internal/benchplan"
)

// The test binary doubles as a client in serve mode: "fake-client NAME
// SCALE" answers every case name with SCALE*1000 keys/s, "fail-me" with an
// error, and logs what it did to $BENCHDRIVE_LOG.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "fake-client" {
		fakeClient(os.Args[2], os.Args[3])
		return
	}
	os.Exit(m.Run())
}

func fakeClient(name, scale string) {
	f, err := os.OpenFile(os.Getenv("BENCHDRIVE_LOG"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(3)
	}
	defer f.Close()
	s, _ := strconv.ParseFloat(scale, 64)
	fmt.Fprintf(f, "start %s\n", name)
	enc := json.NewEncoder(os.Stdout)
	client := map[string]string{"Go": "go", "Python": "python", "C": "c"}[name]
	enc.Encode(benchplan.Run{Schema: benchplan.Schema, Client: client, Params: map[string]any{"scale": s}})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		c := in.Text()
		if c == "quit" {
			fmt.Fprintf(f, "quit %s\n", name)
			return
		}
		fmt.Fprintf(f, "%s %s\n", name, c)
		if c == "fail-me" {
			enc.Encode(benchplan.ServeReply{Results: []benchplan.Result{}, Error: "no such case"})
			continue
		}
		if name == "C" && c != "a" { // the C floor runs only some cases
			enc.Encode(benchplan.ServeReply{Results: []benchplan.Result{}})
			continue
		}
		enc.Encode(benchplan.ServeReply{Results: []benchplan.Result{{Case: benchplan.Case{Name: c}, OpsPerSec: 1000 * s, Errors: len(c) % 2}}})
	}
}

func fakeArgv(t *testing.T, name, scale string) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "fake-client", name, scale}
}

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pythonFirst bool
		// the order of one round's requests, per case: A B A B
		pass []string
	}{
		{"go first within a round", false, []string{"Go", "Python", "Go", "Python"}},
		{"python first within a round", true, []string{"Python", "Go", "Python", "Go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			logPath := filepath.Join(dir, "clients.log")
			t.Setenv("BENCHDRIVE_LOG", logPath)
			var stdout, stderr strings.Builder
			err := Run(Options{Rounds: 2, Repeat: 2, OutDir: dir, Cases: []string{"a", "bb"}, PythonFirst: tc.pythonFirst,
				GoArgv: fakeArgv(t, "Go", "1.5"), PythonArgv: fakeArgv(t, "Python", "1"), Stdout: &stdout, Stderr: &stderr})
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			log, _ := os.ReadFile(logPath)
			var want []string
			for _, first := range []string{"Go", "Python"} {
				second := map[string]string{"Go": "Python", "Python": "Go"}[first]
				want = append(want, "start "+first, "start "+second)
				for _, c := range []string{"a", "bb"} {
					for _, who := range tc.pass {
						want = append(want, who+" "+c)
					}
				}
				want = append(want, "quit Go", "quit Python")
			}
			if got := strings.TrimSpace(string(log)); got != strings.Join(want, "\n") {
				t.Errorf("clients did\n%s\nwant\n%s", log, strings.Join(want, "\n"))
			}
			if !strings.Contains(stderr.String(), "1.50x") {
				t.Errorf("the drive log lacks the per-case ratio:\n%s", stderr.String())
			}
			for i := 1; i <= 4; i++ {
				for _, who := range []string{"go", "py"} {
					data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s-%d.json", who, i)))
					if err != nil {
						t.Fatal(err)
					}
					var r benchplan.Run
					if err := json.Unmarshal(data, &r); err != nil {
						t.Fatal(err)
					}
					d, _ := r.Params["drive"].(map[string]any)
					round, pass := (i+1)/2, 2-i%2
					first := map[int]string{1: "Go", 2: "Python"}[round]
					if len(r.Results) != 2 || r.Results[0].Name != "a" || r.Results[1].Name != "bb" ||
						d["round"] != float64(round) || d["pass"] != float64(pass) || d["first"] != first || d["rounds"] != 2.0 ||
						r.Params["scale"] == nil {
						t.Errorf("%s-%d.json: %s", who, i, data)
					}
					if len(r.Failures) != 1 || !strings.Contains(r.Failures[0], "a: 1 failed keys") {
						t.Errorf("%s-%d.json: failures %q", who, i, r.Failures)
					}
				}
			}
			if !strings.Contains(stdout.String(), "2 cases x 4 samples x 2 clients") {
				t.Errorf("stdout: %s", stdout.String())
			}
		})
	}
}

// TestRunWithCFloor: the C client starts after the pair, gets every case
// right after it in the first pass and right before it in the second, and
// its runs hold only the cases it answered.
func TestRunWithCFloor(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "clients.log")
	t.Setenv("BENCHDRIVE_LOG", logPath)
	var stderr strings.Builder
	err := Run(Options{Rounds: 1, Repeat: 2, OutDir: dir, Cases: []string{"a", "bb"}, GoArgv: fakeArgv(t, "Go", "1"),
		PythonArgv: fakeArgv(t, "Python", "1"), CArgv: fakeArgv(t, "C", "2"), Stdout: io.Discard, Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	log, _ := os.ReadFile(logPath)
	want := []string{"start Go", "start Python", "start C"}
	for _, c := range []string{"a", "bb"} {
		want = append(want, "Go "+c, "Python "+c, "C "+c, "C "+c, "Go "+c, "Python "+c)
	}
	want = append(want, "quit Go", "quit Python", "quit C")
	if got := strings.TrimSpace(string(log)); got != strings.Join(want, "\n") {
		t.Errorf("clients did\n%s\nwant\n%s", log, strings.Join(want, "\n"))
	}
	for i := 1; i <= 2; i++ {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("c-%d.json", i)))
		if err != nil {
			t.Fatal(err)
		}
		var r benchplan.Run
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Client != "c" || len(r.Results) != 1 || r.Results[0].Name != "a" || r.Results[0].OpsPerSec != 2000 {
			t.Errorf("c-%d.json: %s", i, data)
		}
	}
	if !strings.Contains(stderr.String(), "C     2.00k keys/s") {
		t.Errorf("the drive log lacks the C floor's line:\n%s", stderr.String())
	}
	o := Options{Rounds: 1, Repeat: 1, OutDir: dir, Cases: []string{"a"}, GoArgv: fakeArgv(t, "Go", "1"),
		PythonArgv: fakeArgv(t, "Python", "1"), CArgv: []string{filepath.Join(dir, "no-such-binary")}, Stdout: io.Discard, Stderr: io.Discard}
	if err := Run(o); err == nil || !strings.Contains(err.Error(), "start C client") {
		t.Errorf("a C client that does not start: %v", err)
	}
}

func TestRunFails(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("BENCHDRIVE_LOG", filepath.Join(dir, "clients.log"))
	good := Options{Rounds: 1, Repeat: 1, OutDir: dir, Cases: []string{"a"}, GoArgv: fakeArgv(t, "Go", "1"),
		PythonArgv: fakeArgv(t, "Python", "1"), Stdout: io.Discard, Stderr: io.Discard}
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"no rounds", func(o *Options) { o.Rounds = 0 }, "positive"},
		{"no cases", func(o *Options) { o.Cases = nil }, "empty"},
		{"a case fails", func(o *Options) { o.Cases = []string{"a", "fail-me"} }, "no such case"},
		{"a client does not start", func(o *Options) { o.PythonArgv = []string{filepath.Join(dir, "no-such-binary")} }, "start Python client"},
		{"a client is not a server", func(o *Options) { o.PythonArgv = []string{"/bin/sh", "-c", "echo hello"} }, "bad header"},
		{"no command", func(o *Options) { o.GoArgv = nil }, "no command"},
	} {
		o := good
		tc.mod(&o)
		if err := Run(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestRunWithTwinProcesses: each client's combining twins go to its twins'
// process, which starts after the others, and their results land in that
// client's runs.
func TestRunWithTwinProcesses(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "clients.log")
	t.Setenv("BENCHDRIVE_LOG", logPath)
	var stderr strings.Builder
	twin := "a" + benchplan.CombiningSuffix
	err := Run(Options{Rounds: 1, Repeat: 1, OutDir: dir, Cases: []string{"a", twin}, GoArgv: fakeArgv(t, "Go", "1"),
		PythonArgv: fakeArgv(t, "Python", "1"), GoTwinArgv: fakeArgv(t, "GT", "3"), PythonTwinArgv: fakeArgv(t, "PT", "4"),
		Stdout: io.Discard, Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	log, _ := os.ReadFile(logPath)
	want := []string{"start Go", "start Python", "start GT", "start PT", "Go a", "Python a", "GT " + twin, "PT " + twin,
		"quit Go", "quit Python", "quit GT", "quit PT"}
	if got := strings.TrimSpace(string(log)); got != strings.Join(want, "\n") {
		t.Errorf("clients did\n%s\nwant\n%s", log, strings.Join(want, "\n"))
	}
	for who, twinOps := range map[string]float64{"go": 3000, "py": 4000} {
		data, err := os.ReadFile(filepath.Join(dir, who+"-1.json"))
		if err != nil {
			t.Fatal(err)
		}
		var r benchplan.Run
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Results) != 2 || r.Results[0].Name != "a" || r.Results[0].OpsPerSec != 1000 ||
			r.Results[1].Name != twin || r.Results[1].OpsPerSec != twinOps {
			t.Errorf("%s-1.json: %s", who, data)
		}
	}
	o := Options{Rounds: 1, Repeat: 1, OutDir: dir, Cases: []string{"a"}, GoArgv: fakeArgv(t, "Go", "1"),
		PythonArgv: fakeArgv(t, "Python", "1"), GoTwinArgv: []string{filepath.Join(dir, "no-such-binary")}, Stdout: io.Discard, Stderr: io.Discard}
	if err := Run(o); err == nil || !strings.Contains(err.Error(), "start Go twins client") {
		t.Errorf("a twins' process that does not start: %v", err)
	}
}

// TestSmapsRollup reads this process's own figures: a live process has
// resident memory, and its huge pages are part of it.
func TestSmapsRollup(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no /proc/PID/smaps_rollup here")
	}
	rss, huge, err := smapsRollup(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || huge < 0 || huge > rss {
		t.Errorf("rss %d, huge %d", rss, huge)
	}
	if _, _, err := smapsRollup(-1); err == nil {
		t.Errorf("no error for a process that does not exist")
	}
}
