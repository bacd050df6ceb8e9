package crashlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/reason"
)

func TestCrashLogLines(t *testing.T) {
	c := Logs{Dir: t.TempDir()}
	at := time.Date(2026, 11, 30, 4, 0, 0, 123e6, time.UTC)
	code := 1
	if err := c.Append("api", "api-0", Crash{Time: at, Reason: "exited", ExitCode: &code}); err != nil {
		t.Fatal(err)
	}
	if err := c.Append("api", "api-0", Crash{Time: at, Reason: "reuseport_missing", Detail: `port 3000 "held"`}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(c.Dir, "api", "api-0.crash.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "2026-11-30T04:00:00.123Z reason=exited code=1\n" +
		`2026-11-30T04:00:00.123Z reason=reuseport_missing detail="port 3000 \"held\""` + "\n"
	if string(data) != want {
		t.Errorf("crash.log =\n%s\nwant\n%s", data, want)
	}
}

func TestCrashLogConcurrentAppends(t *testing.T) {
	c := Logs{Dir: t.TempDir()}
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Append("api", "api-0", Crash{Time: time.Now(), Reason: "killed", Signal: "SIGKILL", Detail: strings.Repeat("x", 200)})
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(c.Path("api", "api-0"))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d lines, want 50", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, " reason=killed signal=SIGKILL detail=") {
			t.Fatalf("torn line %q", l)
		}
	}
}

func TestCrashLogLast(t *testing.T) {
	c := Logs{Dir: t.TempDir()}
	if _, ok := c.Last("api", "api-0"); ok {
		t.Fatal("a line from nowhere")
	}
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	c.Append("api", "api-0", Crash{Time: at, Reason: reason.Exited})
	c.Append("api", "api-0", Crash{Time: at.Add(time.Second), Reason: reason.RuntimeBelowFloor, Detail: "x y"})
	last, ok := c.Last("api", "api-0")
	if !ok || last.Reason != reason.RuntimeBelowFloor || !last.Time.Equal(at.Add(time.Second)) {
		t.Fatalf("%+v %v", last, ok)
	}
}

func TestCrashLogLastLines(t *testing.T) {
	c := Logs{Dir: t.TempDir()}
	if got := c.LastLines("api", "api-0", 2); got != nil {
		t.Fatalf("no log: %q", got)
	}
	code := 1
	for i := 0; i < 3; i++ {
		if err := c.Append("api", "api-0", Crash{Time: time.Unix(int64(i), 0), Reason: reason.Exited, ExitCode: &code, Detail: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got := c.LastLines("api", "api-0", 2)
	if len(got) != 2 || got[0] != `1970-01-01T00:00:01.000Z reason=exited code=1 detail="1"` || !strings.HasSuffix(got[1], `detail="2"`) {
		t.Errorf("last lines %q", got)
	}
	// Just after a rotation, the previous log's lines come first.
	p := c.Path("api", "api-0")
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	c.Append("api", "api-0", Crash{Time: time.Unix(3, 0), Reason: reason.Budget})
	got = c.LastLines("api", "api-0", 2)
	if len(got) != 2 || !strings.HasSuffix(got[0], `detail="2"`) || !strings.Contains(got[1], "reason=restart_budget_exhausted") {
		t.Errorf("after a rotation: %q", got)
	}
}
