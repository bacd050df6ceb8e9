package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
)

// One command at a time holds the registry lock; the next waits, says
// for whom, and gives up when its context does.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "registry.lock")
	unlock, err := Lock(context.Background(), path, 0, func(string) { t.Error("the first lock waited") })
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	_, err = Lock(context.Background(), path, 50*time.Millisecond, func(holder string) { said = append(said, holder) })
	var werr *WaitError
	if !errors.As(err, &werr) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock: %v", err)
	}
	pid := fmt.Sprintf(" (pid %d)", os.Getpid())
	if len(said) != 1 || said[0] != pid || werr.Holder != pid || !strings.HasPrefix(err.Error(), "gave up after ") {
		t.Errorf("said %q, %+v: %v", said, werr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Lock(ctx, path, 0, func(string) {}); !errors.As(err, &werr) || !strings.HasPrefix(err.Error(), "interrupted while waiting for ") {
		t.Errorf("interrupted: %v", err)
	}
	unlock()
	unlock() // harmless
	again, err := Lock(context.Background(), path, time.Second, func(string) { t.Error("waited for a released lock") })
	if err != nil {
		t.Fatal(err)
	}
	again()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v", fi.Mode(), err)
	}
}

// A project's reload lock is taken without waiting: a second taker
// learns who has it.
func TestTryLockProject(t *testing.T) {
	l := layout.Layout{StateDir: t.TempDir()}
	first, _, err := TryLockProject(l, "api")
	if err != nil || first == nil {
		t.Fatalf("first: %v %v", first, err)
	}
	second, holder, err := TryLockProject(l, "api")
	if err != nil || second != nil || holder != os.Getpid() {
		t.Fatalf("second: %v %d %v", second, holder, err)
	}
	if other, _, err := TryLockProject(l, "web"); err != nil || other == nil {
		t.Fatalf("another project: %v %v", other, err)
	} else {
		other.Unlock()
	}
	first.Unlock()
	third, _, err := TryLockProject(l, "api")
	if err != nil || third == nil {
		t.Fatalf("after Unlock: %v %v", third, err)
	}
	third.Unlock()
	var none *ProjectLock
	none.Unlock()
}

func parse(t *testing.T, dir, text string) *config.Project {
	t.Helper()
	p, err := config.Parse(filepath.Join(dir, "bm2.toml"), []byte(text), config.Options{Cwd: dir, AnyName: true, NumCPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	p.File = filepath.Join(dir, "etc", p.Name+".toml")
	return p
}

// A registration writes the project file and its private part, and Undo
// puts back what was there.
func TestRegistration(t *testing.T) {
	dir := t.TempDir()
	p := parse(t, dir, "name = \"api\"\nscript = \"server.js\"\nport = 3000\n[env]\nTOKEN = \"s3cret\"\n")
	opts := config.Options{NumCPU: 2}
	r, err := New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Changed || r.Existed || r.Private == nil {
		t.Fatalf("new: %+v", r)
	}
	if err := r.Write(); err != nil {
		t.Fatal(err)
	}
	public, _ := os.ReadFile(p.File)
	private, _ := os.ReadFile(config.PrivatePath(p.File))
	if strings.Contains(string(public), "s3cret") || !strings.Contains(string(private), "s3cret") {
		t.Fatalf("public %q, private %q", public, private)
	}
	if again, err := New(p, opts); err != nil || again.Changed {
		t.Fatalf("the same again: %+v %v", again, err)
	}

	q := parse(t, dir, "name = \"api\"\nscript = \"server.js\"\nport = 4000\n")
	r2, err := New(q, opts)
	if err != nil || !r2.Changed || !r2.Existed {
		t.Fatalf("changed: %+v %v", r2, err)
	}
	if err := r2.Write(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(config.PrivatePath(p.File)); !os.IsNotExist(err) {
		t.Errorf("the private part stays without [env]: %v", err)
	}
	if err := r2.Undo(); err != nil {
		t.Fatal(err)
	}
	if back, _ := os.ReadFile(p.File); string(back) != string(public) {
		t.Errorf("undo: %q, want %q", back, public)
	}
	if back, _ := os.ReadFile(config.PrivatePath(p.File)); string(back) != string(private) {
		t.Errorf("undo, private part: %q, want %q", back, private)
	}
	if err := r.Undo(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p.File, config.PrivatePath(p.File)} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s stays after the first registration's undo: %v", f, err)
		}
	}
}

// One owner per name, and no overlapping ports.
func TestOwnerAndConflict(t *testing.T) {
	dir := t.TempDir()
	reg := parse(t, dir, "name = \"api\"\nscript = \"server.js\"\nport = 3000\n")
	reg.Source = "/srv/api/bm2.toml"
	entries := []config.Entry{{Name: "api", Path: reg.File, Project: reg}}

	p := parse(t, dir, "name = \"api\"\nscript = \"server.js\"\nport = 3000\n")
	p.Source = "/srv/other/bm2.toml"
	err := CheckOwner(p, entries, false)
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Hint, "--replace") || !strings.Contains(err.Error(), "a name has one owner") {
		t.Errorf("another source: %v", err)
	}
	if err := CheckOwner(p, entries, true); err != nil {
		t.Errorf("--replace: %v", err)
	}
	p.Source = reg.Source
	if err := CheckOwner(p, entries, false); err != nil {
		t.Errorf("the same source: %v", err)
	}

	web := parse(t, dir, "name = \"web\"\nscript = \"server.js\"\nport = 3000\n")
	asked := false
	reserved := func() []*config.Project { asked = true; return nil }
	if err := CheckConflict(web, entries, reserved); err == nil || asked {
		t.Errorf("overlap: %v (reserved asked: %v)", err, asked)
	}
	if err := CheckConflict(p, entries, reserved); err != nil || !asked {
		t.Errorf("its own name: %v (reserved asked: %v)", err, asked)
	}
	endpoint := &config.Project{Name: "bm2-metrics.socket", File: "the shipped bm2-metrics.socket", Port: 3000, Instances: 1, Mode: config.Fork}
	if err := CheckConflict(p, entries, func() []*config.Project { return []*config.Project{endpoint} }); err == nil {
		t.Error("a reserved port is free")
	}
}
