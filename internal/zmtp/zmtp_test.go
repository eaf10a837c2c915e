package zmtp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// pair handshakes two ends of a connection as a and b, each accepting
// only what the other announces when accept is nil.
func pair(t *testing.T, a, b string, accept ...string) (*Conn, *Conn, error, error) {
	t.Helper()
	x, y := tcpPair(t)
	type res struct {
		c   *Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := Handshake(y, b, []string{a}, time.Now().Add(5*time.Second))
		if err != nil {
			y.Close()
		}
		ch <- res{c, err}
	}()
	if accept == nil {
		accept = []string{b}
	}
	c, err := Handshake(x, a, accept, time.Now().Add(5*time.Second))
	if err != nil {
		x.Close()
	}
	r := <-ch
	return c, r.c, err, r.err
}

// tcpPair is two ends of a loopback TCP connection (net.Pipe has no
// buffer, and both ends of a handshake write first).
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	x, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	y, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close(); y.Close() })
	return x, y
}

func TestHandshakeAndMessages(t *testing.T) {
	sub, pub, e1, e2 := pair(t, "SUB", "PUB")
	if e1 != nil || e2 != nil {
		t.Fatal(e1, e2)
	}
	if sub.PeerType() != "PUB" || pub.PeerType() != "SUB" || sub.PeerMinor() != 1 {
		t.Fatalf("peer types %q %q", sub.PeerType(), pub.PeerType())
	}
	big := bytes.Repeat([]byte{7}, 300) // a long frame
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		sub.Subscribe([]byte("top"))
		sub.Ping(time.Second, []byte("ctx"))
		_ = sub.Flush()
		pub.WriteMessage(nil, []byte{1, 2}, big)
		pub.WriteRaw(AppendMessage(nil, []byte("a"), big))
		_ = pub.Flush()
	}()
	var m Message
	if err := pub.Read(&m); err != nil {
		t.Fatal(err)
	}
	if topic, sub, ok := Subscription(&m); !ok || !sub || string(topic) != "top" {
		t.Fatalf("subscription %q %v %v", topic, sub, ok)
	}
	if err := pub.Read(&m); err != nil || m.Command != "PING" || string(m.Body[2:]) != "ctx" {
		t.Fatalf("ping %+v %v", m, err)
	}
	<-wrote
	pub.PongFor(&m)
	if err := pub.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, want := range [][][]byte{{{}, {1, 2}, big}, {[]byte("a"), big}} {
		if err := sub.Read(&m); err != nil {
			t.Fatal(err)
		}
		if len(m.Frames) != len(want) {
			t.Fatalf("%d frames, want %d", len(m.Frames), len(want))
		}
		for i := range want {
			if !bytes.Equal(m.Frames[i], want[i]) {
				t.Fatalf("frame %d differs", i)
			}
		}
	}
	if err := sub.Read(&m); err != nil || m.Command != "PONG" || string(m.Body) != "ctx" {
		t.Fatalf("pong %+v %v", m, err)
	}
}

func TestSubscriptionForms(t *testing.T) {
	for _, tc := range []struct {
		m       Message
		topic   string
		sub, ok bool
	}{
		{Message{Command: "SUBSCRIBE", Body: []byte("x")}, "x", true, true},
		{Message{Command: "CANCEL", Body: []byte("x")}, "x", false, true},
		{Message{Frames: [][]byte{{1}}}, "", true, true},
		{Message{Frames: [][]byte{{0, 'y'}}}, "y", false, true},
		{Message{Frames: [][]byte{{2}}}, "", false, false},
		{Message{Frames: [][]byte{{1}, {}}}, "", false, false},
		{Message{Command: "PING"}, "", false, false},
	} {
		topic, sub, ok := Subscription(&tc.m)
		if string(topic) != tc.topic || sub != tc.sub || ok != tc.ok {
			t.Errorf("%+v: %q %v %v", tc.m, topic, sub, ok)
		}
	}
}

func TestHandshakeRefusals(t *testing.T) {
	_, _, e1, e2 := pair(t, "SUB", "REQ", "PUB", "XPUB")
	if !errors.Is(e1, ErrProtocol) {
		t.Errorf("SUB meeting REQ: %v / %v", e1, e2)
	}
	for _, tc := range []struct {
		name     string
		greeting []byte
	}{
		{"not zmtp", append([]byte("GET / HTTP/1.1\r\n"), make([]byte, 48)...)},
		{"zmtp 2", func() []byte { g := greeting(); g[10] = 2; return g }()},
		{"curve", func() []byte { g := greeting(); copy(g[12:], "CURVE"); return g }()},
	} {
		x, y := tcpPair(t)
		go func() {
			_, _ = io.ReadFull(y, make([]byte, 64))
			_, _ = y.Write(tc.greeting)
		}()
		_, err := Handshake(x, "SUB", []string{"PUB"}, time.Now().Add(time.Second))
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v", tc.name, err)
		}
		x.Close()
		y.Close()
	}
}

func TestReadLimits(t *testing.T) {
	sub, pub, e1, e2 := pair(t, "SUB", "PUB")
	if e1 != nil || e2 != nil {
		t.Fatal(e1, e2)
	}
	sub.MaxMessage = 100
	go func() {
		pub.WriteMessage(make([]byte, 60), make([]byte, 60))
		_ = pub.Flush()
	}()
	var m Message
	if err := sub.Read(&m); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized message: %v", err)
	}
}

// FuzzRead: any bytes after a handshake read as messages or fail, never
// panic or claim more memory than the limit.
func FuzzRead(f *testing.F) {
	f.Add(AppendMessage(nil, nil, []byte{0, 0, 0, 0, 0, 0, 0, 1}, []byte{0x90}))
	f.Add([]byte{0x04, 0x05, 0x04, 'P', 'I', 'N', 'G'})
	f.Add([]byte{0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x05, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &Conn{MaxMessage: 1 << 16}
		c.r = newReader(bytes.NewReader(data))
		var m Message
		for i := 0; i < 100; i++ {
			if err := c.Read(&m); err != nil {
				return
			}
			if len(m.buf) > 1<<16 {
				t.Fatalf("buffer %d above the limit", len(m.buf))
			}
		}
	})
}
