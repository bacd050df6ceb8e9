package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/history"
	"github.com/bm2dev/bm2/journal"
)

func writeFailure(at time.Time, path, errno, detail string) journal.Event {
	return journal.Event{Kind: journal.StateWriteFailed, Project: "api", Instance: "api-0", Time: at, Path: path, Errno: errno, Detail: detail}
}

// One line per file that could not be written, the newest failure of
// each, in the order of their last failures, with the errno in words and
// how often; today's at a time of day, older ones with their date.
func TestWriteFailureLines(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.Local)
	crash := "/var/log/bm2/api/api-0.crash.log"
	mark := "/var/lib/bm2/errored/api"
	spool := "/var/lib/bm2/notify"
	evs := []journal.Event{
		writeFailure(now.Add(-13*time.Hour), spool, "EROFS", ""),
		writeFailure(now.Add(-2*time.Hour), crash, "ENOSPC", "crash log: write: no space left on device"),
		writeFailure(now.Add(-90*time.Minute), mark, "", "rotated under us again and again"),
		{Kind: journal.InstanceCrashed, Project: "api", Time: now.Add(-80 * time.Minute)},
		writeFailure(now.Add(-70*time.Minute), "", "EIO", ""),
		writeFailure(now.Add(-time.Hour), crash, "ENOSPC", ""),
		writeFailure(now.Add(-57*time.Minute+4*time.Second), crash, "ENOSPC", ""),
		writeFailure(now.Add(-time.Minute), "/var/log/bm2/api/\x1b[2J.crash.log", "EIO", ""),
	}
	got := writeFailureLines(evs, now)
	want := []string{
		"  ! /var/lib/bm2/notify could not be written (EROFS, read-only file system) at 2026-04-30 23:00:00",
		"  ! /var/lib/bm2/errored/api could not be written (rotated under us again and again) at 10:30:00",
		"  ! /var/log/bm2/api/api-0.crash.log could not be written (ENOSPC, no space left on device) at 11:03:04, 3 times since 10:00:00",
		`  ! /var/log/bm2/api/\x1b[2J.crash.log could not be written (EIO, input/output error) at 11:59:00`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := writeFailureLines(nil, now); len(got) != 0 {
		t.Errorf("no failures: %q", got)
	}
}

// bm2 status reads the project's state_write_failed events of the last
// day from the journal and shows them.
func TestStatusShowsWriteFailures(t *testing.T) {
	te := served(t)
	crash := "/var/log/bm2/api/api-0.crash.log"
	for _, c := range []struct {
		at      time.Time
		project string
		path    string
	}{
		{te.now.Add(-25 * time.Hour), "api", "/var/log/bm2/api/api-1.crash.log"},  // too old
		{te.now.Add(-3 * time.Minute), "web", "/var/log/bm2/web/web-0.crash.log"}, // another project's
		{te.now.Add(-2 * time.Minute), "api", crash},
	} {
		e := journal.Fields(journal.WriteFailed(c.project, c.project+"-0", c.path, errNoSpace, "lost"))
		e["__REALTIME_TIMESTAMP"] = fmt.Sprint(c.at.UnixMicro())
		e["_UID"], e["_TRANSPORT"], e["MESSAGE"] = "0", "journal", "m"
		te.entries.add(e)
	}
	te.mustRun(ExitOK, "status", "api")
	out := te.stdout.String()
	want := "  ! " + crash + " could not be written (ENOSPC, no space left on device) at " + te.now.Add(-2*time.Minute).Local().Format("15:04:05") + "\n"
	if !strings.Contains(out, want) {
		t.Fatalf("status lacks %q:\n%s", want, out)
	}
	if strings.Count(out, " could not be written ") != 1 {
		t.Errorf("status shows more than the project's recent failure:\n%s", out)
	}
}

var errNoSpace = fmt.Errorf("crash log: %w", syscall.ENOSPC)

// The journal line says how far back the project's entries go and what
// the journal takes in all, labelled as the whole journal's (journald
// keeps no size per project); a journal this user cannot read is a note.
func TestJournalLine(t *testing.T) {
	oldest := time.Date(2026, 11, 30, 4, 0, 0, 0, time.Local)
	gib := int64(1181116006) // journalctl: 1.1G
	for _, c := range []struct {
		u    history.Use
		user bool
		want string
	}{
		{history.Use{Oldest: oldest, Total: gib}, false,
			"journal: api's entries since 2026-11-30 04:00:00; all journal files take 1.1 GiB (journalctl --disk-usage; journald keeps no size per project)"},
		{history.Use{Oldest: oldest, Total: 24 << 20}, true,
			"journal: api's entries since 2026-11-30 04:00:00; your journal files take 24.0 MiB (journalctl --user --disk-usage; journald keeps no size per project)"},
		{history.Use{Total: 512}, false,
			"journal: no entries of api; all journal files take 512 B (journalctl --disk-usage; journald keeps no size per project)"},
		{history.Use{Oldest: oldest, Total: -1}, false,
			"journal: api's entries since 2026-11-30 04:00:00"},
		{history.Use{Total: -1, Err: journal.ErrRestricted}, false,
			"journal: not readable as this user (run it as root, or add yourself to the adm or systemd-journal group)"},
		{history.Use{Total: 8 << 20, Err: journal.ErrUserVolatile}, true,
			"journal: not readable as you: this host keeps its journal in memory only, and your services' entries are in the system journal (`bm2 logs api` says what to do)"},
		{history.Use{Total: -1, Err: fmt.Errorf("%w: exec: \"journalctl\": \x1b[2Jnot found", journal.ErrNoJournalctl)}, false,
			`journal: not read (journalctl could not be run: exec: "journalctl": \x1b[2Jnot found)`},
	} {
		if got := journalLine("api", c.u, c.user); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.u, got, c.want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 29: "1.5 GiB", 5 << 40: "5.0 TiB"} {
		if got := iecBytes(n); got != want {
			t.Errorf("iecBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// bm2 status asks the journal for the oldest entry of the project's own
// units, by name (bm2@api-* would be api-v2's too), and for the journal's
// disk usage, and shows both on the journal line.
func TestStatusShowsJournalUse(t *testing.T) {
	te := served(t)
	te.entries.line(te.now.Add(-3*time.Hour), "bm2@api-v2-0.service", "another project's")
	te.entries.line(te.now.Add(-2*time.Hour), "bm2@api-surge.service", "the surge's, during a reload")
	te.entries.line(te.now.Add(-time.Hour), "bm2@api-1.service", "hello")
	te.diskUsage = 1181116006 // journalctl: 1.1G
	te.mustRun(ExitOK, "status", "api")
	want := "  journal: api's entries since " + te.now.Add(-2*time.Hour).Local().Format(timeLayout) +
		"; all journal files take 1.1 GiB (journalctl --disk-usage; journald keeps no size per project)\n"
	if out := te.stdout.String(); !strings.Contains(out, want) {
		t.Fatalf("status lacks %q:\n%s", want, out)
	}
	var asked []string
	for _, q := range te.entries.queries {
		if len(q.Fields) > 0 {
			if q.BM2 || q.Lines != 0 || q.Follow {
				t.Errorf("oldest-entry query %+v", q)
			}
			asked = append(asked, q.Units...)
		}
	}
	if got := strings.Join(asked, " "); got != "bm2@api-0.service bm2@api-1.service bm2@api-2.service bm2@api-3.service bm2@api-surge.service" {
		t.Errorf("the oldest entry was asked of %q", got)
	}
}

// A journal this user may not read (outside adm and systemd-journal) is
// a short note on the journal line; status still succeeds and says
// nothing of it on stderr.
func TestStatusUnreadableJournal(t *testing.T) {
	te := served(t)
	te.entries.err = journal.ErrRestricted
	te.diskUsageErr = journal.ErrRestricted
	te.mustRun(ExitOK, "status", "api")
	want := "  journal: not readable as this user (" + journal.RestrictedHint + ")\n"
	if out := te.stdout.String(); !strings.Contains(out, want) {
		t.Fatalf("status lacks %q:\n%s", want, out)
	}
	if strings.Contains(te.stderr.String(), "journal") {
		t.Errorf("stderr speaks of the journal:\n%s", te.stderr.String())
	}
}

// Status says how a cluster-mode port spreads its connections: here the
// kernel's hash, and why steering is unavailable (the mark steer add
// left); bm2 delete takes the mark and the pins away.
func TestStatusSaysPortSteering(t *testing.T) {
	te := served(t)
	te.paths.RunStateDir = filepath.Join(te.root, "run", "bm2")
	te.mustRun(ExitOK, "status", "api")
	if got := statusLine(te, "  port 3000: "); got != "  port 3000: kernel hash (steering unavailable: no_bpffs)" {
		t.Errorf("no bpf filesystem where the pins go: %q", got)
	}
	steerDir := filepath.Join(te.paths.RunStateDir, "steer")
	if err := os.MkdirAll(steerDir, 0o700); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(steerDir, "api.unavailable")
	if err := os.WriteFile(mark, []byte("kernel_too_old\nload the program: not supported (Linux 5.10.0; steering needs 5.14)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	te.mustRun(ExitOK, "status", "api")
	want := "  port 3000: kernel hash (steering unavailable: kernel_too_old: load the program: not supported (Linux 5.10.0; steering needs 5.14))"
	if got := statusLine(te, "  port 3000: "); got != want {
		t.Errorf("status line %q, want %q", got, want)
	}
	// What delete finds pinned (files standing in for the pins).
	pins := filepath.Join(te.root, "bpf", "bm2", "api")
	for _, f := range []string{"prog", "table", "socks"} {
		te.write(filepath.Join("bpf", "bm2", "api", f), "")
	}
	te.mustRun(ExitOK, "delete", "api")
	for _, f := range []string{mark, pins} {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left by delete: %v", f, err)
		}
	}
}

// Fork mode has no shared port to steer: status says nothing of it.
func TestStatusNoSteeringInForkMode(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/web/bm2.toml", "name = \"web\"\nscript = \"a.js\"\nport = 4000\nexec_mode = \"fork\"\n"))
	te.mustRun(ExitOK, "serve", dir)
	te.mustRun(ExitOK, "status", "web")
	if strings.Contains(te.stdout.String(), "port 4000: ") || strings.Contains(te.stdout.String(), "steer") {
		t.Errorf("fork mode status speaks of steering:\n%s", te.stdout.String())
	}
}

// User scope cannot steer: status says nothing of it.
func TestStatusNoSteeringInUserScope(t *testing.T) {
	te := userEnv(t)
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\ninstances = 2\nport = 8080\n"))
	te.mustRun(ExitOK, "serve", dir)
	te.mustRun(ExitOK, "status", "app")
	if strings.Contains(te.stdout.String(), "port 8080: ") {
		t.Errorf("user scope status speaks of steering:\n%s", te.stdout.String())
	}
}
