package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestErroredLifecycle(t *testing.T) {
	d := Dir{Path: t.TempDir()}
	if _, ok, err := d.Errored("api"); ok || err != nil {
		t.Fatalf("fresh dir: ok=%v err=%v", ok, err)
	}
	first, err := d.SetErrored("api", "reuseport_missing")
	if err != nil || !first {
		t.Fatalf("first mark: %v %v", first, err)
	}
	again, err := d.SetErrored("api", "something_else")
	if err != nil || again {
		t.Fatalf("second mark should keep the first: %v %v", again, err)
	}
	reason, ok, err := d.Errored("api")
	if err != nil || !ok || reason != "reuseport_missing" {
		t.Fatalf("Errored = %q %v %v", reason, ok, err)
	}
	if _, ok, _ := d.Errored("web"); ok {
		t.Fatal("another project is errored too")
	}
	if err := d.ClearErrored("api"); err != nil {
		t.Fatal(err)
	}
	if err := d.ClearErrored("api"); err != nil {
		t.Fatalf("clearing twice: %v", err)
	}
	if _, ok, _ := d.Errored("api"); ok {
		t.Fatal("still errored after clear")
	}
}

func TestInstanceMarks(t *testing.T) {
	d := Dir{Path: t.TempDir(), Run: t.TempDir()}
	if _, ok, err := d.InstanceErrored("api-1"); ok || err != nil {
		t.Fatalf("fresh dir: ok=%v err=%v", ok, err)
	}
	first, err := d.SetInstanceErrored("api-1", Mark{Reason: "port_in_use", Detail: "python3 (pid 812),\x1b[2J uid 65534 (nobody)\nforged"})
	if err != nil || !first {
		t.Fatalf("first mark: %v %v", first, err)
	}
	if again, err := d.SetInstanceErrored("api-1", Mark{Reason: "other"}); err != nil || again {
		t.Fatalf("second mark should keep the first: %v %v", again, err)
	}
	for _, name := range []string{"api-11", "apix-0", "api-x-0"} {
		if _, err := d.SetInstanceErrored(name, Mark{Reason: "port_in_use"}); err != nil {
			t.Fatal(err)
		}
	}
	m, ok, err := d.InstanceErrored("api-1")
	if err != nil || !ok || m.Reason != "port_in_use" || m.Detail != "python3 (pid 812), [2J uid 65534 (nobody) forged" {
		t.Fatalf("InstanceErrored = %+v %v %v", m, ok, err)
	}
	// Under Run, not under Path: a reboot forgets it.
	if got := d.InstanceErroredPath("api-1"); !strings.HasPrefix(got, d.Run+"/") {
		t.Errorf("mark at %s, not under %s", got, d.Run)
	}
	// The project is not errored, nor is its neighbour.
	if _, ok, _ := d.Errored("api"); ok {
		t.Error("the project is errored too")
	}
	if _, ok, _ := d.InstanceErrored("api-0"); ok {
		t.Error("the neighbour is errored too")
	}
	if got, err := d.ErroredInstances("api"); err != nil || strings.Join(got, " ") != "api-1 api-11" {
		t.Errorf("ErroredInstances(api) = %q %v", got, err)
	}
	if err := d.ClearInstanceErrored("api-1"); err != nil {
		t.Fatal(err)
	}
	if err := d.ClearInstanceErrored("api-1"); err != nil {
		t.Fatalf("clearing twice: %v", err)
	}
	if _, ok, _ := d.InstanceErrored("api-1"); ok {
		t.Fatal("still errored after clear")
	}
	// A link in the mark's place is not followed.
	if err := os.Symlink("/etc/passwd", d.InstanceErroredPath("api-2")); err != nil {
		t.Fatal(err)
	}
	if m, _, err := d.InstanceErrored("api-2"); err == nil && m.Reason != "" {
		t.Errorf("read through a link: %+v", m)
	}
}

// notADir is a path under a regular file: every write there fails with
// ENOTDIR, as root too (a read-only directory does not stop root).
func notADir(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(f, "lib")
}

// A project whose mark cannot be written under Path is marked under Run
// instead: errored all the same (until the next boot), the first verdict
// still wins, and clearing removes it.
func TestErroredFallsBackToRun(t *testing.T) {
	d := Dir{Path: notADir(t), Run: t.TempDir()}
	first, err := d.SetErrored("api", "reuseport_missing")
	var merr *MarkError
	if !first || !errors.As(err, &merr) {
		t.Fatalf("SetErrored = %v, %v; want first, with a *MarkError", first, err)
	}
	if merr.Path != d.ErroredPath("api") || merr.Held != d.ErroredRunPath("api") || merr.FallbackErr != nil ||
		!errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("MarkError %+v", merr)
	}
	if !strings.Contains(err.Error(), "marked in "+d.ErroredRunPath("api")+" instead, until the next boot") {
		t.Errorf("error %q", err)
	}
	if got := d.ErroredRunPath("api"); !strings.HasPrefix(got, d.Run+"/") || filepath.Dir(got) == filepath.Dir(d.InstanceErroredPath("api-0")) {
		t.Errorf("fallback mark %s: not under Run, or among the instances' marks", got)
	}
	reason, ok, err := d.Errored("api")
	if err != nil || !ok || reason != "reuseport_missing" {
		t.Fatalf("Errored = %q %v %v", reason, ok, err)
	}
	if again, _ := d.SetErrored("api", "loopback_only"); again {
		t.Error("a second mark won over the first")
	}
	// Once /var has room again, the verdict under Run still stands.
	d.Path = t.TempDir()
	if again, err := d.SetErrored("api", "loopback_only"); again || err != nil {
		t.Errorf("a second mark with /var back: %v %v", again, err)
	}
	if _, err := os.Stat(d.ErroredPath("api")); err == nil {
		t.Error("a second mark was written under Path")
	}
	// Not an instance's mark.
	if got, _ := d.ErroredInstances("api"); len(got) != 0 {
		t.Errorf("ErroredInstances = %v", got)
	}
	if err := d.ClearErrored("api"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d.Errored("api"); ok {
		t.Fatal("still errored after clear")
	}
	if _, err := os.Lstat(d.ErroredRunPath("api")); err == nil {
		t.Fatal("the mark under Run survived the clear")
	}

	// Both marks, as after a fallback and a later mark by hand: clear
	// removes both.
	d = Dir{Path: t.TempDir(), Run: t.TempDir()}
	if _, err := d.SetErrored("web", "reuseport_missing"); err != nil {
		t.Fatal(err)
	}
	if _, err := createMark(d.ErroredRunPath("web"), "loopback_only"); err != nil {
		t.Fatal(err)
	}
	if reason, _, _ := d.Errored("web"); reason != "reuseport_missing" {
		t.Errorf("Errored = %q, want the mark under Path first", reason)
	}
	if err := d.ClearErrored("web"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := d.Errored("web"); ok {
		t.Fatal("still errored after clear")
	}
}

// When neither mark can be written, the project is not marked, and the
// error says both.
func TestErroredNowhere(t *testing.T) {
	d := Dir{Path: notADir(t), Run: notADir(t)}
	first, err := d.SetErrored("api", "reuseport_missing")
	var merr *MarkError
	if first || !errors.As(err, &merr) || merr.Held != "" || !errors.Is(merr.FallbackErr, syscall.ENOTDIR) {
		t.Fatalf("SetErrored = %v, %v (%+v)", first, err, merr)
	}
	if !strings.Contains(err.Error(), "nor in "+d.ErroredRunPath("api")) {
		t.Errorf("error %q", err)
	}
	if _, ok, _ := d.Errored("api"); ok {
		t.Error("errored, with no mark anywhere")
	}
}
