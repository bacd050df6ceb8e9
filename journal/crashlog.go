package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultLogDir is where crash logs live: <dir>/<project>/<instance>.crash.log.
const DefaultLogDir = "/var/log/bm2"

// CrashLog appends to per-instance crash logs under Dir.
type CrashLog struct {
	Dir string
}

// Crash is one crash.log line.
type Crash struct {
	Time     time.Time
	Reason   string // first-class: reuseport_missing, exited, killed, …
	ExitCode *int   // the exit status, when the process exited
	Signal   string // the signal that killed it, e.g. SIGKILL
	Detail   string
}

// Path is the crash log of one instance, e.g. /var/log/bm2/api/api-0.crash.log.
func (c CrashLog) Path(project, instance string) string {
	return filepath.Join(c.Dir, project, instance+".crash.log")
}

// Line renders a crash as one line:
// "2026-11-30T04:00:00.123Z reason=exited code=1 detail=\"…\"".
func (cr Crash) Line() string {
	var b strings.Builder
	b.WriteString(cr.Time.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteString(" reason=" + cr.Reason)
	if cr.ExitCode != nil {
		b.WriteString(" code=" + strconv.Itoa(*cr.ExitCode))
	}
	if cr.Signal != "" {
		b.WriteString(" signal=" + cr.Signal)
	}
	if cr.Detail != "" {
		b.WriteString(" detail=" + strconv.Quote(cr.Detail))
	}
	return b.String()
}

// Append adds one line to the instance's crash log, creating the file and
// its directory as needed. A single write(2) with O_APPEND keeps concurrent
// writers from interleaving within a line.
func (c CrashLog) Append(project, instance string, cr Crash) error {
	p := c.Path(project, instance)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("crash log: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("crash log: %w", err)
	}
	_, err = f.WriteString(cr.Line() + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("crash log %s: %w", p, err)
	}
	return nil
}
