package relay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/journal"
)

func verdictsDir(t *testing.T) Verdicts {
	t.Helper()
	return Verdicts{spoolDir(t)}
}

func confirmed(instance, invocation string) journal.Event {
	return journal.Event{Kind: journal.ReuseportConfirmed, Project: "api", Instance: instance, Port: 3000,
		Invocation: invocation, Message: instance + ": port 3000 is shared with SO_REUSEPORT: cluster mode confirmed"}
}

// A verdict put is read back as the journal would give it: its fields,
// the owner as _UID, the write's time; the latest one wins.
func TestVerdictsRoundTrip(t *testing.T) {
	v := verdictsDir(t)
	if _, ok, err := v.Get("api-0"); ok || err != nil {
		t.Fatalf("Get before any Put = %v, %v; want none", ok, err)
	}
	before := time.Now().Add(-time.Second)
	for _, inv := range []string{"run1", "run2"} {
		if err := v.Put(confirmed("api-0", inv)); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Put(confirmed("api-surge", "run3")); err != nil {
		t.Fatal(err)
	}
	ev, ok, err := v.Get("api-0")
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	if ev.Kind != journal.ReuseportConfirmed || ev.Instance != "api-0" || ev.Invocation != "run2" || ev.Port != 3000 ||
		ev.Project != "api" || !strings.Contains(ev.Message, "cluster mode confirmed") {
		t.Errorf("Get = %+v", ev)
	}
	if ev.Time.Before(before) || ev.Time.After(time.Now().Add(time.Second)) {
		t.Errorf("verdict time %v, want about now", ev.Time)
	}
	if ev, ok, _ := v.Get("api-surge"); !ok || ev.Invocation != "run3" {
		t.Errorf("surge: %v %+v", ok, ev)
	}
	if _, ok, err := v.Get("api-1"); ok || err != nil {
		t.Errorf("Get(api-1) = %v, %v; want none", ok, err)
	}
	names, _ := os.ReadDir(v.Dir)
	if len(names) != 2 {
		t.Errorf("directory holds %d files, want one per instance", len(names))
	}
}

// Nothing but a verdict bm2 wrote on the instance, in a directory of the
// owner's alone, is believed.
func TestVerdictsRefuse(t *testing.T) {
	for _, c := range []struct {
		what string
		make func(t *testing.T, v Verdicts)
		why  string
	}{
		{"another instance's verdict", func(t *testing.T, v Verdicts) {
			writeEntry(t, v.Spool, "api-0", journal.EventEntry(confirmed("api-1", "x")))
		}, `not a verdict on api-0`},
		{"forged _UID", func(t *testing.T, v Verdicts) {
			writeEntry(t, v.Spool, "api-0", with(journal.EventEntry(confirmed("api-0", "x")), "_UID", "0"))
		}, "key _UID: a field journald sets itself"},
		{"wrong identifier", func(t *testing.T, v Verdicts) {
			writeEntry(t, v.Spool, "api-0", with(journal.EventEntry(confirmed("api-0", "x")), journal.FieldIdentifier, "app"))
		}, "not bm2"},
		{"symlink", func(t *testing.T, v Verdicts) {
			target := writeEntry(t, Spool{Dir: t.TempDir()}, "x", journal.EventEntry(confirmed("api-0", "x")))
			if err := os.Symlink(target, filepath.Join(v.Dir, "api-0")); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"directory others can enter", func(t *testing.T, v Verdicts) {
			writeEntry(t, v.Spool, "api-0", journal.EventEntry(confirmed("api-0", "x")))
			if err := os.Chmod(v.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "must be a directory of uid"},
		{"other owner", func(t *testing.T, v Verdicts) {
			testutil.Root(t)
			path := writeEntry(t, v.Spool, "api-0", journal.EventEntry(confirmed("api-0", "x")))
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "is not uid 0's"},
	} {
		t.Run(c.what, func(t *testing.T) {
			v := verdictsDir(t)
			c.make(t, v)
			ev, ok, err := v.Get("api-0")
			if ok || err == nil || !strings.Contains(err.Error(), c.why) {
				t.Errorf("Get = %v, %+v, %v; want no verdict and an error saying %q", ok, ev, err, c.why)
			}
		})
	}
	v := verdictsDir(t)
	for _, name := range []string{"../api-0", "api", "", "api-0/x"} {
		if _, ok, err := v.Get(name); ok || err == nil {
			t.Errorf("Get(%q) = %v, %v; want refused", name, ok, err)
		}
		ev := confirmed(name, "x")
		if err := v.Put(ev); err == nil {
			t.Errorf("Put on %q: no error", name)
		}
	}
	if _, ok, err := (Verdicts{Spool{Dir: filepath.Join(t.TempDir(), "none"), Owner: os.Geteuid()}}).Get("api-0"); ok || err != nil {
		t.Errorf("no directory: %v, %v; want none, no error", ok, err)
	}
}

// Forget removes a project's verdicts, the surge's too, and no other
// project's, not even one whose name begins with its own.
func TestVerdictsForget(t *testing.T) {
	v := verdictsDir(t)
	for _, e := range []journal.Event{confirmed("api-0", "r1"), confirmed("api-surge", "r2")} {
		if err := v.Put(e); err != nil {
			t.Fatal(err)
		}
	}
	other := confirmed("api-x-0", "r3")
	other.Project = "api-x"
	if err := v.Put(other); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v.Dir, "notes"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := v.Forget("api"); err != nil {
		t.Fatal(err)
	}
	var left []string
	es, _ := os.ReadDir(v.Dir)
	for _, e := range es {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != "api-x-0 notes" {
		t.Errorf("left %v, want api-x-0 and the file that is no verdict", left)
	}
	if err := (Verdicts{Spool{Dir: filepath.Join(v.Dir, "none"), Owner: v.Owner}}).Forget("api"); err != nil {
		t.Errorf("Forget without a directory: %v", err)
	}
}
