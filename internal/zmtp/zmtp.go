// Package zmtp speaks ZMTP 3.1 (rfc.zeromq.org/spec/37) with the NULL
// security mechanism over one net.Conn: the greeting, the READY handshake,
// multipart messages and the commands PUB/SUB need (SUBSCRIBE, CANCEL,
// PING, PONG). It is what mooncake/kvevents needs to talk to libzmq's PUB
// socket in Mooncake's master without cgo: no socket patterns, queues or
// reconnection here (the callers own those).
package zmtp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Frame flags (the first byte of every frame).
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// ErrProtocol is what every protocol violation of the peer matches.
var ErrProtocol = errors.New("zmtp: protocol error")

// ErrTooLarge: a message above the connection's size limit.
var ErrTooLarge = errors.New("zmtp: message too large")

type protoError string

func (e protoError) Error() string        { return "zmtp: " + string(e) }
func (e protoError) Is(target error) bool { return target == ErrProtocol }

// DefaultMaxMessage bounds a received message (all its frames) unless the
// caller sets another limit.
const DefaultMaxMessage = 64 << 20

// Conn is one ZMTP connection after its handshake.
type Conn struct {
	nc       net.Conn
	r        *bufio.Reader
	w        *bufio.Writer
	peerType string
	minor    byte // the peer's minor version (0: ZMTP 3.0)
	// MaxMessage bounds a received message; 0 means DefaultMaxMessage.
	MaxMessage int
}

// greeting is ours: signature, version 3.1, mechanism NULL, as-server 0.
func greeting() []byte {
	g := make([]byte, 64)
	g[0] = 0xff
	g[9] = 0x7f
	g[10] = 3
	g[11] = 1
	copy(g[12:], "NULL")
	return g
}

// Handshake exchanges greetings and READY commands on nc, announcing
// socketType ("SUB", "PUB"), and checks that the peer's type is one of
// accept. deadline bounds the whole handshake (zero: none).
func Handshake(nc net.Conn, socketType string, accept []string, deadline time.Time) (*Conn, error) {
	c := &Conn{nc: nc, r: newReader(nc), w: bufio.NewWriterSize(nc, 64<<10)}
	if err := nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if _, err := nc.Write(greeting()); err != nil {
		return nil, err
	}
	var g [64]byte
	if _, err := io.ReadFull(c.r, g[:]); err != nil {
		return nil, err
	}
	if g[0] != 0xff || g[9] != 0x7f {
		return nil, protoError("not a ZMTP peer (bad signature)")
	}
	if g[10] < 3 {
		return nil, protoError(fmt.Sprintf("peer speaks ZMTP %d.%d, want 3.x", g[10], g[11]))
	}
	c.minor = g[11]
	if g[10] > 3 {
		c.minor = 1
	}
	if mech := string(bytes.TrimRight(g[12:32], "\x00")); mech != "NULL" {
		return nil, protoError("peer wants security mechanism " + mech + ", only NULL is spoken")
	}
	if err := c.writeCommand("READY", readyProps(socketType)); err != nil {
		return nil, err
	}
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	var m Message
	if err := c.Read(&m); err != nil {
		return nil, err
	}
	if m.Command != "READY" {
		if m.Command == "ERROR" {
			return nil, protoError("peer refused the handshake: " + errorReason(m.Body))
		}
		return nil, protoError(fmt.Sprintf("expected READY, got command %q", m.Command))
	}
	props, err := parseProps(m.Body)
	if err != nil {
		return nil, err
	}
	c.peerType = props["Socket-Type"]
	ok := false
	for _, a := range accept {
		ok = ok || a == c.peerType
	}
	if !ok {
		_ = c.writeCommand("ERROR", errorBody("invalid socket type"))
		_ = c.w.Flush()
		return nil, protoError(fmt.Sprintf("peer is a %q socket, want one of %v", c.peerType, accept))
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return c, nil
}

// PeerType is the peer's Socket-Type.
func (c *Conn) PeerType() string { return c.peerType }

// PeerMinor is the peer's ZMTP minor version (0 for 3.0, which has no
// SUBSCRIBE command: subscriptions go as messages).
func (c *Conn) PeerMinor() byte { return c.minor }

// NetConn is the connection underneath (deadlines, closing).
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

func readyProps(socketType string) []byte {
	b := []byte{byte(len("Socket-Type"))}
	b = append(b, "Socket-Type"...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(socketType)))
	return append(b, socketType...)
}

func parseProps(b []byte) (map[string]string, error) {
	props := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+4 {
			return nil, protoError("truncated READY property")
		}
		name := string(b[1 : 1+n])
		b = b[1+n:]
		vn := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(vn) > uint64(len(b)) {
			return nil, protoError("truncated READY property value")
		}
		props[name] = string(b[:vn])
		b = b[vn:]
	}
	return props, nil
}

func errorBody(reason string) []byte {
	if len(reason) > 255 {
		reason = reason[:255]
	}
	return append([]byte{byte(len(reason))}, reason...)
}

func errorReason(b []byte) string {
	if len(b) == 0 || int(b[0]) > len(b)-1 {
		return "(no reason)"
	}
	return string(b[1 : 1+int(b[0])])
}

// Message is one received message or command. Its slices point into a
// buffer that the next Read on the same Message reuses.
type Message struct {
	// Command is the command's name, "" for a message.
	Command string
	// Body is a command's data after its name.
	Body []byte
	// Frames are a message's frames.
	Frames [][]byte
	buf    []byte
	ends   []int
}

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }

func (c *Conn) limit() int {
	if c.MaxMessage > 0 {
		return c.MaxMessage
	}
	return DefaultMaxMessage
}

// Read reads the next message or command into m, reusing m's buffers.
func (c *Conn) Read(m *Message) error {
	m.Command, m.Body = "", nil
	m.buf, m.ends, m.Frames = m.buf[:0], m.ends[:0], m.Frames[:0]
	for {
		flags, err := c.r.ReadByte()
		if err != nil {
			return err
		}
		var size uint64
		if flags&flagLong != 0 {
			var s [8]byte
			if _, err := io.ReadFull(c.r, s[:]); err != nil {
				return err
			}
			size = binary.BigEndian.Uint64(s[:])
		} else {
			b, err := c.r.ReadByte()
			if err != nil {
				return err
			}
			size = uint64(b)
		}
		if flags&^(flagMore|flagLong|flagCommand) != 0 {
			return protoError(fmt.Sprintf("reserved frame flags %#x", flags))
		}
		if size > uint64(c.limit()-len(m.buf)) {
			return fmt.Errorf("%w: above %d bytes", ErrTooLarge, c.limit())
		}
		start := len(m.buf)
		m.buf = grow(m.buf, int(size))
		if _, err := io.ReadFull(c.r, m.buf[start:]); err != nil {
			return err
		}
		if flags&flagCommand != 0 {
			if len(m.ends) != 0 || flags&flagMore != 0 {
				return protoError("a command inside a multipart message")
			}
			body := m.buf[start:]
			if len(body) < 1 || int(body[0]) > len(body)-1 {
				return protoError("truncated command name")
			}
			m.Command = string(body[1 : 1+int(body[0])])
			m.Body = body[1+int(body[0]):]
			return nil
		}
		m.ends = append(m.ends, len(m.buf))
		if flags&flagMore == 0 {
			break
		}
	}
	prev := 0
	for _, e := range m.ends {
		m.Frames = append(m.Frames, m.buf[prev:e])
		prev = e
	}
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*cap(b)+n)
	copy(nb, b)
	return nb
}

func (c *Conn) writeFrame(flags byte, parts ...[]byte) {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	if size > 255 {
		_ = c.w.WriteByte(flags | flagLong)
		var s [8]byte
		binary.BigEndian.PutUint64(s[:], uint64(size))
		_, _ = c.w.Write(s[:])
	} else {
		_ = c.w.WriteByte(flags)
		_ = c.w.WriteByte(byte(size))
	}
	for _, p := range parts {
		_, _ = c.w.Write(p)
	}
}

func (c *Conn) writeCommand(name string, body []byte) error {
	c.writeFrame(flagCommand, []byte{byte(len(name))}, []byte(name), body)
	return nil
}

// WriteMessage buffers a multipart message; Flush sends what is buffered.
func (c *Conn) WriteMessage(frames ...[]byte) {
	for i, f := range frames {
		var flags byte
		if i < len(frames)-1 {
			flags = flagMore
		}
		c.writeFrame(flags, f)
	}
}

// WriteCommand buffers a command.
func (c *Conn) WriteCommand(name string, body []byte) {
	_ = c.writeCommand(name, body)
}

// Flush sends what is buffered.
func (c *Conn) Flush() error { return c.w.Flush() }

// Buffered is the number of bytes waiting for Flush.
func (c *Conn) Buffered() int { return c.w.Buffered() }

// Subscribe buffers a subscription to topic (a prefix of the messages'
// first frame; "" for all). It is sent as a message starting with 1, the
// form of ZMTP 3.0, which every 3.x publisher (libzmq 4.x included) takes.
func (c *Conn) Subscribe(topic []byte) {
	c.writeFrame(0, []byte{1}, topic)
}

// Ping buffers a PING command (ZMTP 3.1 heartbeat) with ttl (the peer may
// drop the connection after it passes without traffic; 0: no limit) and
// context (echoed in the PONG, at most 16 bytes).
func (c *Conn) Ping(ttl time.Duration, context []byte) {
	body := binary.BigEndian.AppendUint16(nil, uint16(min(ttl/(100*time.Millisecond), 0xffff)))
	c.WriteCommand("PING", append(body, context...))
}

// Subscription reports whether m is a subscription change sent to a
// publisher, in either form: a SUBSCRIBE or CANCEL command (ZMTP 3.1), or a
// message whose first byte is 1 or 0 (3.0). topic is a view into m.
func Subscription(m *Message) (topic []byte, subscribe, ok bool) {
	switch m.Command {
	case "SUBSCRIBE":
		return m.Body, true, true
	case "CANCEL":
		return m.Body, false, true
	case "":
		if len(m.Frames) == 1 && len(m.Frames[0]) >= 1 && m.Frames[0][0] <= 1 {
			return m.Frames[0][1:], m.Frames[0][0] == 1, true
		}
	}
	return nil, false, false
}

// PongFor buffers the PONG answering the PING in m (the caller checked
// m.Command == "PING").
func (c *Conn) PongFor(m *Message) {
	ctx := []byte(nil)
	if len(m.Body) > 2 {
		ctx = m.Body[2:]
	}
	c.WriteCommand("PONG", ctx)
}

// AppendMessage appends the wire form of a multipart message to dst, for a
// publisher that encodes a message once and writes it to many peers.
func AppendMessage(dst []byte, frames ...[]byte) []byte {
	for i, f := range frames {
		var flags byte
		if i < len(frames)-1 {
			flags = flagMore
		}
		if len(f) > 255 {
			dst = append(dst, flags|flagLong)
			dst = binary.BigEndian.AppendUint64(dst, uint64(len(f)))
		} else {
			dst = append(dst, flags, byte(len(f)))
		}
		dst = append(dst, f...)
	}
	return dst
}

// WriteRaw buffers bytes made by AppendMessage.
func (c *Conn) WriteRaw(b []byte) error {
	_, err := c.w.Write(b)
	return err
}
