package state

import (
	"os"
	"strings"
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
