package control

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bm2dev/bm2/journal"
)

// The verdict belongs to the instance's current run: an event with the
// run's InvocationID, or without one, logged after the run came online.
func TestReuseportVerdict(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	u := UnitStatus{ActiveEnter: t0, InvocationID: "bbbb"}
	evs := []journal.Event{
		{Time: t0.Add(-time.Minute), Kind: journal.ReuseportConfirmed, Instance: "api-0"}, // an older run
		{Time: t0.Add(time.Second), Kind: journal.ReuseportConfirmed, Instance: "api-1"},  // another instance
	}
	if v, _ := ReuseportVerdict(u, "api-0", evs); v != "" {
		t.Fatalf("verdict %q from an older run", v)
	}
	evs = append(evs, journal.Event{Time: t0.Add(time.Second), Kind: journal.ReuseportConfirmed, Instance: "api-0"})
	if v, _ := ReuseportVerdict(u, "api-0", evs); v != verdictConfirmed {
		t.Fatalf("verdict %q", v)
	}
	// An InvocationID, when the event has one, decides.
	evs[2].Invocation = "aaaa"
	if v, _ := ReuseportVerdict(u, "api-0", evs); v != "" {
		t.Fatalf("verdict %q for another invocation", v)
	}
	evs = append(evs, journal.Event{Time: t0.Add(-time.Hour), Kind: journal.ReuseportProbeStopped, Instance: "api-0", Invocation: "bbbb"})
	if v, _ := ReuseportVerdict(u, "api-0", evs); v != verdictNoListener {
		t.Fatalf("verdict %q", v)
	}
}

func TestListensOn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	pid := uint32(os.Getpid())
	ctx := context.Background()
	self := UnitStatus{MainPID: pid, UID: uint32(os.Getuid())}
	if ok, err := listensOn(ctx, self, port); !ok || err != nil {
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
	if ok, err := listensOn(ctx, self, port); ok || err != nil {
		t.Fatalf("closed listener found: %v %v", ok, err)
	}
	if ok, err := pidListensOn(pid, port); ok || err != nil {
		t.Fatalf("pidListensOn, closed listener: %v %v", ok, err)
	}
	if ok, err := listensOn(ctx, UnitStatus{}, port); ok || err != nil {
		t.Fatalf("pid 0: %v %v", ok, err)
	}
	inodes, err := listeningInodes(filepath.Join(t.TempDir(), "nope"), port)
	if err == nil || inodes != nil {
		t.Fatalf("%v %v", inodes, err)
	}
}
