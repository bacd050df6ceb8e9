package journal

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestKindsHaveDistinctIDs(t *testing.T) {
	seen := map[string]Kind{}
	for k, info := range kinds {
		if len(info.id) != 32 {
			t.Errorf("%s: MESSAGE_ID %q is not 128 bits of hex", k, info.id)
		}
		if other, dup := seen[info.id]; dup {
			t.Errorf("%s and %s share MESSAGE_ID %s", k, other, info.id)
		}
		seen[info.id] = k
	}
	if ReuseportMissing.Level() != "error" || ReuseportConfirmed.Level() != "info" || ReuseportProbeStopped.Level() != "warning" {
		t.Error("levels do not follow priorities")
	}
}

func TestFields(t *testing.T) {
	f := Fields(Event{Kind: ReuseportMissing, Project: "api", Instance: "api-1", Reason: "reuseport_missing", Detail: "d"})
	want := map[string]string{
		"SYSLOG_IDENTIFIER": "bm2", "BM2_EVENT": "reuseport_missing", "BM2_PROJECT": "api",
		"BM2_INSTANCE": "api-1", "BM2_REASON": "reuseport_missing", "MESSAGE_ID": "fef51d7506c045a3aca2d41b6586cc18",
		"BM2_LEVEL": "error", "BM2_DETAIL": "d",
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("%s = %q, want %q", k, f[k], v)
		}
	}
}

func TestCrashLogLines(t *testing.T) {
	c := CrashLog{Dir: t.TempDir()}
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
	c := CrashLog{Dir: t.TempDir()}
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
