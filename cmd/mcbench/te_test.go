package main

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mooncake-go/mooncake-go/mooncake"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer"
	"github.com/mooncake-go/mooncake-go/mooncake/transfer/transfertest"
)

// TestTERun runs `mcbench te` as target and initiator on one engine
// namespace, in this process on the embedded engine (the cluster's
// metadata server with the native one), and parses what it prints as
// te-compare does.
func TestTERun(t *testing.T) {
	if b := mooncake.Backend().Name; b != "embedded" && b != "native" {
		// Without cgo there is no engine: the command says so.
		err := runTE([]string{"-metadata_server", "P2PHANDSHAKE"}, nil, io.Discard, io.Discard)
		if !errors.Is(err, transfer.ErrNoCgo) {
			t.Fatalf("mcbench te without cgo: %v, want ErrNoCgo", err)
		}
		return
	}
	meta := transfertest.NewEnv(t).Metadata // the cluster's with the native engine
	for _, op := range []string{"read", "write"} {
		t.Run(op, func(t *testing.T) {
			tname, iname := nextName(), nextName()
			common := []string{"-metadata_server", meta, "-buffer_size", "1048576"}
			inR, inW := io.Pipe()
			var tout bytes.Buffer
			done := make(chan error, 1)
			go func() {
				done <- runTE(append(common, "-mode", "target", "-local_server_name", tname), inR, &tout, io.Discard)
			}()
			probe, err := transfer.Open(transfer.Config{MetadataServer: meta, LocalServerName: nextName()})
			if err != nil {
				t.Fatal(err)
			}
			defer probe.Close()
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if s, err := probe.OpenSegment(tname); err == nil {
					bufs, _ := s.Refresh(nil)
					_ = s.Close()
					if len(bufs) > 0 {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("target did not publish its segment")
				}
			}
			var out bytes.Buffer
			err = runTE(append(common, "-mode", "initiator", "-local_server_name", iname, "-segment_id", tname,
				"-operation", op, "-block_size", "4096", "-batch_size", "16", "-duration", "1"), nil, &out, io.Discard)
			inW.Close()
			if terr := <-done; terr != nil {
				t.Errorf("target: %v", terr)
			}
			if err != nil {
				t.Fatalf("initiator: %v\n%s", err, out.String())
			}
			if !strings.Contains(tout.String(), "ready") {
				t.Errorf("target printed %q", tout.String())
			}
			m := completed.FindStringSubmatch(out.String())
			if m == nil || m[2] == "0" || latency.FindStringSubmatch(out.String()) == nil {
				t.Fatalf("output does not parse as te-compare expects:\n%s", out.String())
			}
		})
	}
}

func TestTEFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" : accepted
	}{
		{[]string{"-metadata_server", "m"}, ""},
		{[]string{"-metadata_server", "m", "-mode", "both"}, "initiator or target"},
		{[]string{"-metadata_server", "m", "-operation", "copy"}, "read or write"},
		{[]string{"-metadata_server", "m", "-batch_size", "0"}, "positive"},
		{[]string{"-metadata_server", "m", "-block_size", "0"}, "positive"},
		{[]string{"-metadata_server", "m", "-duration", "0"}, "positive"},
		{[]string{"-metadata_server", ""}, "required"},
		{[]string{"-metadata_server", "m", "extra"}, "unexpected"},
		{[]string{"-metadata_server", "m", "-block_size", "4611686018427387904", "-batch_size", "4"}, "bytes of buffer"},
		{[]string{"-metadata_server", "m", "-block_size", "4611686018427387904", "-batch_size", "4", "-threads", "1"}, "bytes of buffer"},
		{[]string{"-metadata_server", "m", "-buffer_size", "4611686018427387904"}, "-buffer_size"},
	} {
		_, err := parseTE(tc.args, io.Discard)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("parseTE(%q) = %v, want %q", tc.args, err, tc.want)
		}
	}
	o, err := parseTE([]string{"-metadata_server", "m", "-buffer_size", "1", "-block_size", "4096", "-batch_size", "8", "-threads", "2"}, io.Discard)
	if err != nil || o.bufferSize != 4096*8*2 {
		t.Errorf("buffer_size raised to block*batch*threads: %+v, %v", o, err)
	}
}

func TestTECases(t *testing.T) {
	cases, err := teCases("read,write", "4096,65536", 128, 1, "read:67108864:8:2")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cases {
		got = append(got, c.String())
	}
	want := "read 4 KiB x128 t1|read 64 KiB x128 t1|write 4 KiB x128 t1|write 64 KiB x128 t1|read 64 MiB x8 t2"
	if strings.Join(got, "|") != want {
		t.Errorf("cases %q, want %q", strings.Join(got, "|"), want)
	}
	for _, bad := range []string{"read:4096:1", "copy:4096:1:1", "read:0:1:1", "read:4096:0:1", "read:4096:1:-1", "read:x:1:1", "read:4096:2000000:1"} {
		if _, err := parseTECase(bad); err == nil {
			t.Errorf("parseTECase(%q) accepted", bad)
		}
	}
	if _, err := teCases("read", "4096", 128, 1, defaultExtra); err != nil {
		t.Errorf("default -extra: %v", err)
	}
}

// TestTECompareFromMissingFile: -from names a file that is not there: the
// error says so, instead of asking for -upstream.
func TestTECompareFromMissingFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	err := runTECompare([]string{"-from", missing}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-from") || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("%v, want an error naming -from and the file", err)
	}
}
