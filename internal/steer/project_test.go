package steer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The mark says the first time only, keeps the reason and its line of
// detail, and goes with Remove.
func TestStoreMarkUnavailable(t *testing.T) {
	s := Store{Pins: t.TempDir(), Run: filepath.Join(t.TempDir(), "bm2", "steer")}
	if _, _, ok, err := s.Unavailable("api"); ok || err != nil {
		t.Fatalf("no mark: %v %v", ok, err)
	}
	first, err := s.MarkUnavailable("api", ReasonNoBPFFS, "/sys/fs/bpf is on\nno bpf filesystem")
	if err != nil || !first {
		t.Fatalf("first mark: %v %v", first, err)
	}
	if again, err := s.MarkUnavailable("api", ReasonKernel, "other"); err != nil || again {
		t.Errorf("second mark: %v %v, want not first", again, err)
	}
	why, detail, ok, err := s.Unavailable("api")
	if err != nil || !ok || why != ReasonNoBPFFS || detail != "/sys/fs/bpf is on no bpf filesystem" {
		t.Errorf("Unavailable = %q %q %v %v", why, detail, ok, err)
	}
	if st, err := os.Stat(s.Run); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v, want a directory 0700", s.Run, st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Dir(s.Run)); err != nil || st.Mode().Perm()&0o055 != 0o055 {
		t.Errorf("%s: %v %v, want one everyone may read (/run/bm2)", filepath.Dir(s.Run), st.Mode(), err)
	}
	if _, _, ok, _ := s.Unavailable("web"); ok {
		t.Error("another project is marked")
	}
	if err := s.Remove("api"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := s.Unavailable("api"); ok {
		t.Error("mark left by Remove")
	}
	if err := s.Remove("api"); err != nil {
		t.Errorf("Remove of nothing: %v", err)
	}
}

// A run directory someone else may write is refused.
func TestStoreRefusesOpenRunDir(t *testing.T) {
	run := filepath.Join(t.TempDir(), "steer")
	if err := os.Mkdir(run, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(run, 0o777); err != nil {
		t.Fatal(err)
	}
	s := Store{Run: run}
	if _, err := s.MarkUnavailable("api", ReasonKernel, "x"); err == nil {
		t.Error("mark written in a world-writable directory")
	}
	if _, err := s.Lock("api"); err == nil {
		t.Error("lock taken in a world-writable directory")
	}
}

// The lock keeps a second holder waiting until the first lets go.
func TestStoreLock(t *testing.T) {
	s := Store{Run: filepath.Join(t.TempDir(), "steer")}
	unlock, err := s.Lock("api")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		u, err := s.Lock("api")
		if err == nil {
			u()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a second holder got the lock")
	case <-time.After(50 * time.Millisecond):
	}
	other, err := s.Lock("web")
	if err != nil {
		t.Fatalf("another project's lock: %v", err)
	}
	other()
	unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the second holder never got the lock")
	}
}

// Group makes and pins a group, opens it the next time, and makes a new
// one when the project's port changed or the pins are half there; Remove
// takes the pins away.
func TestStoreGroup(t *testing.T) {
	needSteering(t)
	s := Store{Pins: filepath.Join(bpffs(t), "bm2"), Run: filepath.Join(t.TempDir(), "steer")}
	port, srv := group(t, 2)
	g, created, err := s.Group("api", port)
	if err != nil || !created {
		t.Fatalf("first Group: %v %v", created, err)
	}
	fd(t, srv[0].l, func(fd int) error {
		if err := g.Attach(fd); err != nil {
			return err
		}
		return g.Add(0, fd)
	})
	g.Close()
	g, created, err = s.Group("api", port)
	if err != nil || created || !slices.Equal(g.Live(), []int{0}) {
		t.Fatalf("second Group: created %v, %v; live %v", created, err, g.Live())
	}
	g.Close()
	other, _ := group(t, 1)
	g, created, err = s.Group("api", other)
	if err != nil || !created || g.Port() != other || len(g.Live()) != 0 {
		t.Fatalf("Group for another port: created %v, %v; port %d, live %v", created, err, g.Port(), g.Live())
	}
	g.Close()
	if err := os.Remove(filepath.Join(s.Dir("api"), pinSocks)); err != nil {
		t.Fatal(err)
	}
	g, created, err = s.Group("api", other)
	if err != nil || !created {
		t.Fatalf("Group over half a pin: created %v, %v", created, err)
	}
	g.Close()
	if err := s.Remove("api"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir("api")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pins left by Remove: %v", err)
	}
}

// Without a bpf filesystem Group is ReasonNoBPFFS, and makes nothing.
func TestStoreGroupWithoutBPFFS(t *testing.T) {
	s := Store{Pins: filepath.Join(t.TempDir(), "bm2"), Run: filepath.Join(t.TempDir(), "steer")}
	var ue *UnavailableError
	if _, _, err := s.Group("api", 3000); !errors.As(err, &ue) || ue.Reason != ReasonNoBPFFS {
		t.Errorf("Group = %v, want ReasonNoBPFFS", err)
	}
	if _, err := os.Stat(s.Pins); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s made: %v", s.Pins, err)
	}
}
