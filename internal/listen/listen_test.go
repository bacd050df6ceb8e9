package listen

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/bm2dev/bm2/internal/view"
)

func TestListensOn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	pid := uint32(os.Getpid())
	ctx := context.Background()
	self := view.UnitStatus{MainPID: pid, UID: uint32(os.Getuid())}
	if ok, err := On(ctx, self, port); !ok || err != nil {
		t.Fatalf("listening socket not found: %v %v", ok, err)
	}
	// Without sock_diag, from /proc/<pid>/net/tcp.
	if ok, err := pidListensOn(pid, port); !ok || err != nil {
		t.Fatalf("pidListensOn: %v %v", ok, err)
	}
	// A connected socket on the port is not a listener of this process.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l.Close()
	if ok, err := On(ctx, self, port); ok || err != nil {
		t.Fatalf("closed listener found: %v %v", ok, err)
	}
	if ok, err := pidListensOn(pid, port); ok || err != nil {
		t.Fatalf("pidListensOn, closed listener: %v %v", ok, err)
	}
	if ok, err := On(ctx, view.UnitStatus{}, port); ok || err != nil {
		t.Fatalf("pid 0: %v %v", ok, err)
	}
	inodes, err := listeningInodes(filepath.Join(t.TempDir(), "nope"), port)
	if err == nil || inodes != nil {
		t.Fatalf("%v %v", inodes, err)
	}
}
