package crashlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/testutil"
)

// seqOf reads back the sequence number a test wrote as the line's detail.
func seqOf(t *testing.T, line string) int {
	t.Helper()
	_, d, ok := strings.Cut(line, ` detail="`)
	if !ok {
		t.Fatalf("line without detail: %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(d, `"`))
	if err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
	return n
}

func logLines(t *testing.T, p string) []string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// A crash loop that never ends: 50,000 lines into a log capped at 16 KiB.
// The log and its one old generation stay within the cap, they hold the
// newest lines in order with none missing between them, and Last reads the
// newest.
func TestCrashLogRotates(t *testing.T) {
	const limit, n = 16 << 10, 50_000
	c := Logs{Dir: t.TempDir(), MaxSize: limit}
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		code := 1
		why := reason.Exited
		if i == n {
			why = reason.Budget
		}
		if err := c.Append("api", "api-0", Crash{Time: at.Add(time.Duration(i) * time.Millisecond), Reason: why, ExitCode: &code, Detail: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	p := c.Path("api", "api-0")
	for _, f := range []string{p, p + ".1"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > limit || st.Size() < limit/4 {
			t.Errorf("%s: %d bytes, want at most %d (and not nearly empty)", f, st.Size(), limit)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 2 {
		t.Errorf("%d files in the log directory, want the log and its .1: %v", len(entries), entries)
	}
	old, cur := logLines(t, p+".1"), logLines(t, p)
	all := append(old, cur...)
	if got := seqOf(t, all[len(all)-1]); got != n {
		t.Errorf("newest line is #%d, want #%d", got, n)
	}
	for i := 1; i < len(all); i++ {
		if a, b := seqOf(t, all[i-1]), seqOf(t, all[i]); b != a+1 {
			t.Fatalf("line #%d follows #%d: lines lost or out of order across the rotation", b, a)
		}
	}
	last, ok := c.Last("api", "api-0")
	if !ok || last.Reason != reason.Budget || !last.Time.Equal(at.Add(n*time.Millisecond)) {
		t.Errorf("Last = %+v, %v; want the newest line (restart_budget_exhausted)", last, ok)
	}
	// Just after a rotation, before the new file has a line, Last falls
	// back to the old generation.
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	if last, ok := c.Last("api", "api-0"); !ok || last.Reason != reason.Exited {
		t.Errorf("Last with an empty log = %+v, %v; want the last line of .1", last, ok)
	}
}

// Writers racing through rotations: no torn line, no file beyond the cap,
// no rotation of a file another writer has just rotated (the old
// generation is full), and each writer's lines in the order it wrote them.
func TestCrashLogConcurrentRotation(t *testing.T) {
	const limit, writers, each = 4 << 10, 8, 500
	c := Logs{Dir: t.TempDir(), MaxSize: limit}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := c.Append("api", "api-0", Crash{Time: time.Now(), Reason: reason.Killed, Signal: "SIGKILL", Detail: strconv.Itoa(w*each + i)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p := c.Path("api", "api-0")
	last := map[int]int{}
	maxLine := 0
	for _, f := range []string{p + ".1", p} {
		for _, l := range logLines(t, f) {
			if !strings.Contains(l, " reason=killed signal=SIGKILL detail=") {
				t.Fatalf("torn line %q in %s", l, f)
			}
			maxLine = max(maxLine, len(l)+1)
			n := seqOf(t, l)
			if prev, ok := last[n/each]; ok && n <= prev {
				t.Errorf("writer %d: line #%d after #%d", n/each, n, prev)
			}
			last[n/each] = n
		}
	}
	for _, f := range []string{p + ".1", p} {
		if st, err := os.Stat(f); err != nil || st.Size() > limit {
			t.Fatalf("%s: %v, %v bytes (cap %d)", f, err, st.Size(), limit)
		}
	}
	if st, _ := os.Stat(p + ".1"); st.Size() <= limit-int64(maxLine) {
		t.Errorf("%s.1 has %d bytes: rotated before it was full (cap %d, lines up to %d bytes)", p, st.Size(), limit, maxLine)
	}
}

// The writer is root in /var/log/bm2: a symbolic link in place of the log
// is refused, and one in place of the old generation is replaced, never
// followed.
func TestCrashLogFollowsNoLink(t *testing.T) {
	c := Logs{Dir: t.TempDir(), MaxSize: 200}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := c.Path("api", "api-0")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, p); err != nil {
		t.Fatal(err)
	}
	err := c.Append("api", "api-0", Crash{Time: time.Now(), Reason: reason.Exited})
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Append through a link: %v; want a refusal naming %s", err, p)
	}
	os.Remove(p)
	if err := os.Symlink(victim, p+".1"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := c.Append("api", "api-0", Crash{Time: time.Now(), Reason: reason.Exited, Detail: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := os.Lstat(p + ".1"); err != nil || !st.Mode().IsRegular() {
		t.Errorf("%s.1 after a rotation: %v, %v; want a regular file", p, st, err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "precious\n" {
		t.Errorf("the link's target was changed: %q", data)
	}
	// A link in place of the project's directory is refused too.
	c2 := Logs{Dir: t.TempDir()}
	if err := os.Symlink(t.TempDir(), filepath.Join(c2.Dir, "web")); err != nil {
		t.Fatal(err)
	}
	if err := c2.Append("web", "web-0", Crash{Time: time.Now(), Reason: reason.Exited}); err == nil || !strings.Contains(err.Error(), filepath.Join(c2.Dir, "web")) {
		t.Errorf("Append into a linked directory: %v; want a refusal naming it", err)
	}
}

// Crash logs are readable by root and the project's group only (finding
// 7.4 of issue 22: they were 0644, readable by every app): the project's
// directory 0750 and each log 0640, root's, given the group the hook
// names; an old 0644 log is tightened at its next line, a dynamic user's
// group is never given one, and a rotation keeps it all.
func TestCrashLogPermissions(t *testing.T) {
	testutil.Root(t)
	dir := t.TempDir()
	c := Logs{Dir: filepath.Join(dir, "log"), MaxSize: 200}
	line := Crash{Time: time.Now(), Reason: reason.Exited, Detail: strings.Repeat("x", 60)}
	if err := c.AppendGroup("api", "api-0", line, 4242); err != nil {
		t.Fatal(err)
	}
	check := func(p string, mode os.FileMode, gid uint32) {
		t.Helper()
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if st.Mode().Perm() != mode || sys.Uid != 0 || sys.Gid != gid {
			t.Errorf("%s: %04o %d:%d, want %04o 0:%d", p, st.Mode().Perm(), sys.Uid, sys.Gid, mode, gid)
		}
	}
	check(filepath.Join(c.Dir, "api"), 0o750, 4242)
	check(c.Path("api", "api-0"), 0o640, 4242)

	// A log from before (0644, root's group) is tightened; NoGroup keeps
	// the group it has.
	old := c.Path("api", "api-1")
	if err := os.WriteFile(old, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(old, 0o644)
	if err := c.Append("api", "api-1", line); err != nil {
		t.Fatal(err)
	}
	check(old, 0o640, 0)
	if err := c.AppendGroup("api", "api-1", line, LogGroup(61250)); err != nil {
		t.Fatal(err)
	}
	check(old, 0o640, 0) // a dynamic user's group: not given the log
	for range 5 {
		if err := c.AppendGroup("api", "api-0", line, NoGroup); err != nil {
			t.Fatal(err)
		}
	}
	check(c.Path("api", "api-0")+".1", 0o640, 4242)
	check(c.Path("api", "api-0"), 0o640, 4242) // the new generation too
	if LogGroup(0) != NoGroup || LogGroup(1<<32-1) != NoGroup || LogGroup(33) != 33 {
		t.Errorf("LogGroup: %d %d %d", LogGroup(0), LogGroup(1<<32-1), LogGroup(33))
	}
}

// In user scope (the hooks run as the user) crash logs are the user's
// alone: 0600 in a 0700 directory.
func TestCrashLogPermissionsUser(t *testing.T) {
	if testutil.Unprivileged(t) {
		return
	}
	dir := t.TempDir()
	c := Logs{Dir: dir, Sub: "logs"}
	if err := c.AppendGroup("api", "api-0", Crash{Time: time.Now(), Reason: reason.Exited}, 4242); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{filepath.Join(dir, "api", "logs"): 0o700, c.Path("api", "api-0"): 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %04o", p, st.Mode(), err, want)
		}
	}
}

// A line reads back as it was written: time, reason and detail.
func TestParseLineReadsTheDetail(t *testing.T) {
	n := 1
	in := Crash{Time: time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC), Reason: "exited", ExitCode: &n,
		Detail: `its bind to port 3000 was denied: add port_env = ["PORT"]`}
	got, ok := ParseLine(in.Line())
	if !ok || !got.Time.Equal(in.Time) || got.Reason != in.Reason || got.Detail != in.Detail {
		t.Errorf("ParseLine(%q) = %+v, %v", in.Line(), got, ok)
	}
	if got, ok := ParseLine("2026-12-07T20:00:00.000Z reason=killed signal=SIGKILL"); !ok || got.Detail != "" || got.Reason != "killed" {
		t.Errorf("without detail: %+v, %v", got, ok)
	}
}
