package cli

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

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
