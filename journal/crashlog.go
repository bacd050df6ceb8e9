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
	// Sub is a directory between the project's and the log: "logs" in
	// user scope (~/.bm2/<project>/logs/<instance>.crash.log, the seed's
	// path), "" in system scope.
	Sub string
}

// Crash is one crash.log line.
type Crash struct {
	Time     time.Time
	Reason   Reason // first-class: reuseport_missing, exited, killed, …
	ExitCode *int   // the exit status, when the process exited
	Signal   string // the signal that killed it, e.g. SIGKILL
	Detail   string
}

// Path is the crash log of one instance, e.g. /var/log/bm2/api/api-0.crash.log
// (system scope) or ~/.bm2/api/logs/api-0.crash.log (user scope).
func (c CrashLog) Path(project, instance string) string {
	return filepath.Join(c.Dir, project, c.Sub, instance+".crash.log")
}

// Line renders a crash as one line:
// "2026-11-30T04:00:00.123Z reason=exited code=1 detail=\"…\"".
func (cr Crash) Line() string {
	var b strings.Builder
	b.WriteString(cr.Time.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteString(" reason=" + string(cr.Reason))
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

// Last returns the newest line of an instance's crash log (its time and
// reason; the rest is for people), and false when there is none.
func (c CrashLog) Last(project, instance string) (Crash, bool) {
	f, err := os.Open(c.Path(project, instance))
	if err != nil {
		return Crash{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Crash{}, false
	}
	const tail = 8 << 10
	off := max(st.Size()-tail, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return Crash{}, false
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	return ParseCrashLine(lines[len(lines)-1])
}

// ParseCrashLine reads back the time and reason of a crash.log line.
func ParseCrashLine(line string) (Crash, bool) {
	ts, rest, ok := strings.Cut(line, " ")
	if !ok {
		return Crash{}, false
	}
	t, err := time.Parse("2006-01-02T15:04:05.000Z", ts)
	if err != nil {
		return Crash{}, false
	}
	reason, ok := strings.CutPrefix(rest, "reason=")
	if !ok {
		return Crash{}, false
	}
	reason, _, _ = strings.Cut(reason, " ")
	return Crash{Time: t, Reason: Reason(reason)}, true
}
