package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The state file comes back as written, 0644, replaced whole; what bm2
// did not write is refused.
func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir)
	if _, err := Read(path); !IsMissing(err) {
		t.Fatalf("no file yet: %v", err)
	}
	s := State{Project: "api", Instances: []Entry{
		{Instance: "api-0", Invocation: "aa", Status: Healthy, Limit: 3, Last: "200", LatencyMS: 2,
			Checked: t0, Answered: t0, Healthy: t0},
		{Instance: "api-surge", Invocation: "cc", Status: Unhealthy, Failures: 2, Limit: 3, Last: "timeout", LatencyMS: 2000,
			Checked: t0, Counted: t0.Add(-time.Second)},
	}}
	if err := Write(path, s); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Version != StateVersion || len(back.Instances) != 2 || back.Instances[1] != s.Instances[1] || !back.Instances[0].Healthy.Equal(t0) {
		t.Fatalf("%+v", back)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%v %v", fi.Mode(), err)
	}
	if e, ok := back.Of("api-0", "aa"); !ok || e.Last != "200" {
		t.Errorf("Of(api-0, aa) = %+v %v", e, ok)
	}
	if _, ok := back.Of("api-0", "bb"); ok {
		t.Error("an entry of another run counts for this one")
	}
	if _, ok := back.Of("api-0", ""); ok {
		t.Error("an entry counts for a run without an InvocationID")
	}
	// Not bm2's: another version, an unknown field, a symlink.
	for _, bad := range []string{`{"version":2,"project":"api","instances":[]}`, `{"version":1,"project":"api","instances":[],"extra":1}`, `[]`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(link); err == nil {
		t.Error("read through a symbolic link")
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(`{"version":1,"project":"`+strings.Repeat("a", MaxStateSize)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a file past MaxStateSize: %v", err)
	}
}

// In user scope the state file is the app's to write: Decode takes only
// what a health service could have written, so nothing else reaches
// bm2 list, bm2 top or a waiting serve.
func TestDecodeRefusesWhatNoCheckWrites(t *testing.T) {
	good := Entry{Instance: "api-0", Invocation: "0a1b", Status: Healthy, Limit: 3, Last: "200"}
	for name, mutate := range map[string]func(*Entry){
		"control status":   func(e *Entry) { e.Status = "\x1b]52;c;aGk=\x07" },
		"other status":     func(e *Entry) { e.Status = "fine" },
		"control result":   func(e *Entry) { e.Last = "\x1b[2J" },
		"status 99":        func(e *Entry) { e.Last = "99" },
		"status 0200":      func(e *Entry) { e.Last = "0200" },
		"other project":    func(e *Entry) { e.Instance = "web-0" },
		"not an index":     func(e *Entry) { e.Instance = "api-x" },
		"odd invocation":   func(e *Entry) { e.Invocation = "a b" },
		"negative counts":  func(e *Entry) { e.Failures = -1 },
		"huge limit":       func(e *Entry) { e.Limit = 1 << 40 },
		"negative latency": func(e *Entry) { e.LatencyMS = -5 },
	} {
		e := good
		mutate(&e)
		if _, err := Decode(Encode(State{Project: "api", Instances: []Entry{e}})); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	for _, e := range []Entry{good, {Instance: "api-surge", Status: Starting, Last: "refused"}, {Instance: "api-12", Status: Unhealthy, Failures: 2, Limit: 3, Last: "timeout"}} {
		if _, err := Decode(Encode(State{Project: "api", Instances: []Entry{e}})); err != nil {
			t.Errorf("%+v: %v", e, err)
		}
	}
}
