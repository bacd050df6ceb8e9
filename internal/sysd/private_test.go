package sysd

import (
	"bufio"
	"context"
	"encoding/binary"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// fakePrivateSocket is a manager's private socket that accepts EXTERNAL,
// answers every call with an error and counts its connections.
func fakePrivateSocket(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "private")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var conns atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go serveFake(c)
		}
	}()
	return path, &conns
}

func serveFake(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimLeft(strings.TrimSpace(line), "\x00")
		switch {
		case line == "AUTH":
			c.Write([]byte("REJECTED EXTERNAL\r\n"))
			continue
		case strings.HasPrefix(line, "AUTH EXTERNAL"):
			c.Write([]byte("OK 0123456789abcdef0123456789abcdef\r\n"))
			continue
		case line == "NEGOTIATE_UNIX_FD":
			c.Write([]byte("AGREE_UNIX_FD\r\n"))
			continue
		case line == "BEGIN":
		default:
			c.Write([]byte("ERROR\r\n"))
			continue
		}
		break
	}
	for {
		m, err := dbus.DecodeMessage(r)
		if err != nil {
			return
		}
		if m.Type != dbus.TypeMethodCall {
			continue
		}
		reply := &dbus.Message{Type: dbus.TypeError, Flags: dbus.FlagNoReplyExpected, Headers: map[dbus.HeaderField]dbus.Variant{
			dbus.FieldReplySerial: dbus.MakeVariant(m.Serial()),
			dbus.FieldErrorName:   dbus.MakeVariant("org.freedesktop.DBus.Error.UnknownMethod"),
		}}
		if err := reply.EncodeTo(c, binary.LittleEndian); err != nil {
			return
		}
	}
}

// One Conn to a private socket is one connection to it: systemd sends
// each of them every signal.
func TestPrivateConnectionIsOne(t *testing.T) {
	path, conns := fakePrivateSocket(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := privateConnection(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Connected() {
		t.Fatal("not connected")
	}
	if _, err := c.GetUnitPropertiesContext(ctx, "bm2@a-0.service"); err == nil || !strings.Contains(err.Error(), "UnknownMethod") {
		t.Fatalf("a call on the connection: %v, want the server's error", err)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections to the private socket, want 1", n)
	}
	c.Close() // closes the one connection twice: harmless
	if c.Connected() {
		t.Fatal("still connected after Close")
	}
}
