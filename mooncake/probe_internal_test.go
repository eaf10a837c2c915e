package mooncake

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The metadata probe of Open: any HTTP answer passes; a server that is down
// fails at once, one that accepts but never answers fails after the timeout,
// one that answers something else than HTTP fails; all with ErrRPCFail.
func TestProbeHTTP(t *testing.T) {
	answers := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("key") != metadataProbeKey {
			t.Errorf("probe asked for %q", r.URL.RawQuery)
		}
		http.NotFound(w, r)
	}))
	defer answers.Close()

	silent := listen(t, func(c net.Conn) { time.Sleep(2 * time.Second); c.Close() })
	notHTTP := listen(t, func(c net.Conn) { fmt.Fprint(c, "hello\n"); c.Close() })
	down := listen(t, nil)
	down.Close()

	for _, tc := range []struct {
		name    string
		url     string
		wantErr error
		within  time.Duration
	}{
		{"answers 404", answers.URL + "/metadata", nil, time.Second},
		{"down", "http://" + down.Addr().String() + "/metadata", ErrRPCFail, 100 * time.Millisecond},
		{"never answers", "http://" + silent.Addr().String() + "/metadata", ErrRPCFail, time.Second},
		{"not HTTP", "http://" + notHTTP.Addr().String() + "/metadata", ErrRPCFail, time.Second},
		{"no host", "http:///metadata", ErrInvalidParams, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			err := probeHTTP(tc.url, 300*time.Millisecond)
			took := time.Since(t0)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("probe %s: %v, want %v", tc.url, err, tc.wantErr)
			}
			if took > tc.within {
				t.Errorf("took %v, want at most %v", took, tc.within)
			}
		})
	}
}

// probeTCP, the master's and a dummy's real client's probe: an answer
// passes, a port nothing listens on fails at once with ErrRPCFail naming
// what was dialled.
func TestProbeTCP(t *testing.T) {
	up := listen(t, nil)
	require.NoError(t, probeTCP(OpOpen, "master", up.Addr().String(), time.Second))
	down := listen(t, nil)
	down.Close()
	t0 := time.Now()
	err := probeTCP(OpSetupDummy, "real client", down.Addr().String(), 10*time.Second)
	assert.Less(t, time.Since(t0), 5*time.Second, "refused at once, not after the timeout")
	assert.ErrorIs(t, err, ErrRPCFail)
	var me *Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, OpSetupDummy, me.Op)
	assert.Contains(t, err.Error(), "real client")
}

// listen accepts connections on loopback and hands each to serve.
func listen(t *testing.T, serve func(net.Conn)) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if serve != nil {
				go serve(c)
			} else {
				c.Close()
			}
		}
	}()
	return l
}
