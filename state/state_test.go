package state

import "testing"

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
