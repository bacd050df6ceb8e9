package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The event of a failed write names the file and the errno the kernel
// gave (here a real ENOTDIR: a path under a regular file), in its fields
// and its message, and survives the journal's round trip.
func TestWriteFailed(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	werr := fmt.Errorf("crash log: %w", os.MkdirAll(filepath.Join(f, "api"), 0o755))
	path := filepath.Join(f, "api", "api-0.crash.log")
	e := WriteFailed("api", "api-0", path, werr, "the crash is in the journal only")
	if e.Kind != StateWriteFailed || e.Errno != "ENOTDIR" || e.Path != path || e.Detail != werr.Error() ||
		e.Message != "api-0: "+path+" could not be written (ENOTDIR, not a directory); the crash is in the journal only" {
		t.Errorf("event %+v", e)
	}
	if StateWriteFailed.Level() != "warning" {
		t.Errorf("level %s", StateWriteFailed.Level())
	}
	fields := Fields(e)
	if fields[FieldPath] != path || fields[FieldErrno] != "ENOTDIR" || fields[FieldMessageID] != StateWriteFailed.MessageID() {
		t.Errorf("fields %v", fields)
	}
	entry := Entry{FieldUID: "0", FieldMessage: e.Message, "__REALTIME_TIMESTAMP": "1764475200123456"}
	for k, v := range fields {
		entry[k] = v
	}
	back, ok := Decode(entry)
	if !ok || back.Path != path || back.Errno != "ENOTDIR" || back.Kind != StateWriteFailed || back.Instance != "api-0" {
		t.Errorf("decoded %+v %v", back, ok)
	}

	// A project's file, and an error without an errno.
	e = WriteFailed("api", "", "/var/lib/bm2/errored/api", errors.New("rotated under us"), "")
	if e.Errno != "" || e.Message != "project api: /var/lib/bm2/errored/api could not be written (rotated under us)" {
		t.Errorf("event %+v", e)
	}
	if _, set := Fields(e)[FieldErrno]; set {
		t.Error("BM2_ERRNO set without an errno")
	}
}

func TestErrnoNames(t *testing.T) {
	for _, c := range []struct {
		err        error
		name, text string
	}{
		{&os.PathError{Op: "write", Path: "/var/log/bm2/x", Err: syscall.ENOSPC}, "ENOSPC", "no space left on device"},
		{fmt.Errorf("mark: %w", syscall.EROFS), "EROFS", "read-only file system"},
		{errors.Join(errors.New("x"), syscall.EIO), "EIO", "input/output error"},
		{errors.New("no errno"), "", ""},
	} {
		if got := ErrnoName(c.err); got != c.name {
			t.Errorf("ErrnoName(%v) = %q, want %q", c.err, got, c.name)
		}
		if got := ErrnoText(c.name); got != c.text {
			t.Errorf("ErrnoText(%q) = %q, want %q", c.name, got, c.text)
		}
	}
	if got := ErrnoText("EWHATEVER"); got != "EWHATEVER" {
		t.Errorf("ErrnoText of an unknown name = %q", got)
	}
}

type sinkFunc func(Event) error

func (f sinkFunc) Emit(e Event) error { return f(e) }

// Said is done; unsaid is the caller's error, with both causes.
func TestReportWriteFailure(t *testing.T) {
	var got []Event
	ok := sinkFunc(func(e Event) error { got = append(got, e); return nil })
	if err := ReportWriteFailure(ok, "api", "api-0", "/p", nil, ""); err != nil || len(got) != 0 {
		t.Errorf("nil error: %v, %d events", err, len(got))
	}
	if err := ReportWriteFailure(ok, "api", "api-0", "/p", syscall.ENOSPC, "lost"); err != nil || len(got) != 1 || got[0].Errno != "ENOSPC" {
		t.Errorf("said: %v, %+v", err, got)
	}
	broken := sinkFunc(func(Event) error { return errors.New("journald is gone") })
	err := ReportWriteFailure(broken, "api", "api-0", "/p", syscall.ENOSPC, "lost")
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "journald is gone") {
		t.Errorf("unsaid: %v", err)
	}
}
