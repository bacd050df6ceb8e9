package explain

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/journal"
)

// This file takes what one run of an instance logged, for a failure of
// that run (the journal's entries RunQuery selects, which the caller
// reads): the lines of its processes (by the run's InvocationID) and of
// its main process (by _PID: journald can lose the unit and invocation of
// a process's last lines, its error among them, when the process exits
// before journald has read them), without the service manager's own
// lines, and finds where its error starts.

// TailLines is how many log lines a failure report shows of a run
// whose lines have no error, or of a unit.
const TailLines = 5

// runWindow is how many of a run's last lines are looked through for its
// first error.
const runWindow = 200

// errorLines is how many lines a failure shows from the first error of
// its run: a Node.js error, "Require stack:" and its paths, and the
// stack down to the app's own frame.
const errorLines = 12

// runSlack is how long before its main process started (ExecMainStart) a
// run's lines are looked for: systemd's words from a process it could
// not start come from that process, and the clocks of PID 1 and journald
// are read apart.
const runSlack = time.Second

// RunLog is what one run of an instance logged, as its failure shows it.
type RunLog struct {
	// Lines are the run's own lines, oldest first; an entry of several
	// lines is several. As written: unescaped.
	Lines []string
	// First indexes the first line that looks like an error (Error:,
	// TypeError:, error:, Uncaught ..., a line logged at priority err or
	// above where the priority can be told); -1 when none does.
	First int
	// Whole is the journalctl command that shows every line of the run.
	Whole string
}

// FirstError is the run's first error line, "" when none looks like one.
func (r RunLog) FirstError() string {
	if r.First < 0 || r.First >= len(r.Lines) {
		return ""
	}
	return strings.TrimSpace(r.Lines[r.First])
}

// strongError is a line that starts an error report: "Error: ...",
// "TypeError: ...", "Error [ERR_X]: ...", "Uncaught ReferenceError: ...",
// Bun's "error: ...".
var strongError = regexp.MustCompile(`^\s*(Uncaught\s+)?\[?([A-Za-z_$][\w$.]*)?(Error|Exception|Rejection)(\s*\[[^\]]*\])?:|^\s*error:`)

// weakError is a line that speaks of an error without starting a report:
// "  throw err;", "Uncaught", a TypeError named mid-line, "error:" after
// a prefix.
var weakError = regexp.MustCompile(`\bthrow\b|Uncaught|\b[A-Z]\w*Error\b|(?i:\berror:)`)

// runEntryOf tells whether e is a line of the run u of unit, written by
// its processes: an entry of its invocation, or of its main process since
// it started (whose unit journald may have lost), and not the manager's
// own nor the kernel's, nor what bm2's root hooks logged (uid: whose
// entries are bm2's, journal.TrustedFrom). In system scope root's other
// processes in the unit are taken for bm2's hooks (the port fence, the
// exit hook) and left out too (an app runs as root only where root's own
// file says user = "root"); the main process's lines stay, and with them
// systemd's words, logged as root, from a main process it could not
// start.
func runEntryOf(e journal.Entry, unit string, u view.UnitStatus, uid string) bool {
	switch {
	case e["_PID"] == "1", e["_SYSTEMD_UNIT"] == "init.scope", e["_SYSTEMD_USER_UNIT"] == "init.scope":
		return false
	case e[journal.FieldTransport] == "kernel" || e[journal.FieldTransport] == "driver" || e[journal.FieldTransport] == "audit":
		return false
	case journal.TrustedFrom(e, uid):
		return false
	}
	mainPID := u.ExecMainPID != 0 && e["_PID"] == strconv.FormatUint(uint64(u.ExecMainPID), 10)
	if uid == "0" && e[journal.FieldUID] == "0" && !mainPID {
		return false
	}
	if u.InvocationID != "" && e["_SYSTEMD_INVOCATION_ID"] == u.InvocationID {
		return true
	}
	if !mainPID {
		return false
	}
	if !u.ExecMainStart.IsZero() && e.Time().Before(u.ExecMainStart.Add(-runSlack)) {
		return false
	}
	// The unit, when journald kept it, must be the run's: the same PID in
	// another unit is another process.
	for _, k := range []string{"_SYSTEMD_UNIT", "_SYSTEMD_USER_UNIT"} {
		if v := e[k]; v != "" && v != unit && !(k == "_SYSTEMD_UNIT" && strings.HasPrefix(v, "user@")) {
			return false
		}
	}
	return true
}

// RunQuery selects the entries of run u: its invocation's (journald
// records a user unit's too as _SYSTEMD_INVOCATION_ID), and its main
// process's since it started; ok is false when the run is not known.
func RunQuery(u view.UnitStatus) (journal.Query, bool) {
	if u.InvocationID == "" && u.ExecMainPID == 0 {
		return journal.Query{}, false
	}
	q := journal.Query{Lines: runWindow}
	var groups [][]string
	if u.InvocationID != "" {
		groups = append(groups, []string{"_SYSTEMD_INVOCATION_ID=" + u.InvocationID})
	}
	if u.ExecMainPID != 0 {
		groups = append(groups, []string{"_PID=" + strconv.FormatUint(uint64(u.ExecMainPID), 10)})
	}
	if !u.ExecMainStart.IsZero() {
		q.Since = journal.SinceTime(u.ExecMainStart.Add(-runSlack))
	}
	q.Matches, q.Or = groups[0], groups[1:]
	return q, true
}

// RunLogOf makes the RunLog of run u of unit from journal entries (those
// of RunQuery, in journalctl's order); uid is whose entries are bm2's,
// and levelPrefix whether the app's lines carry the priority it gave
// them (log_level_prefix).
func RunLogOf(entries []journal.Entry, unit string, u view.UnitStatus, uid string, levelPrefix bool) RunLog {
	r := RunLog{First: -1}
	weak := -1
	for _, e := range entries {
		if !runEntryOf(e, unit, u, uid) {
			continue
		}
		msg := strings.TrimRight(e[journal.FieldMessage], "\n")
		lines := strings.Split(msg, "\n")
		// A priority means something where the app cannot set it: lines
		// systemd logs from a process it could not start, and an app's
		// with log_level_prefix (which asked for it).
		prio, err := strconv.Atoi(e[journal.FieldPriority])
		byPriority := err == nil && prio <= 3 && (levelPrefix || e[journal.FieldTransport] != "stdout")
		for k, l := range lines {
			switch {
			case r.First >= 0:
			case strongError.MatchString(l) || (k == 0 && byPriority):
				r.First = len(r.Lines)
			case weak < 0 && weakError.MatchString(l):
				weak = len(r.Lines)
			}
			r.Lines = append(r.Lines, l)
		}
	}
	if r.First < 0 {
		r.First = weak
	}
	return r
}

// Text is the part of a failure message that quotes the run: from its
// first error, up to errorLines lines, or, when no line looks like an
// error, its last TailLines lines; escaped (the app's output).
func (r RunLog) Text() string {
	var b strings.Builder
	lines, more := r.Lines, 0
	if r.First >= 0 {
		lines = lines[r.First:]
		if len(lines) > errorLines {
			lines, more = lines[:errorLines], len(lines)-errorLines
		}
		fmt.Fprintf(&b, "\nits last run's output, from its first error (%s shows all of it):", r.Whole)
	} else {
		if len(lines) > TailLines {
			lines = lines[len(lines)-TailLines:]
		}
		fmt.Fprintf(&b, "\nthe last lines of its last run (%s shows all of it):", r.Whole)
	}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue // Node.js's blank lines around an error say nothing
		}
		b.WriteString("\n  ")
		b.WriteString(termtext.Escape(l))
	}
	if more > 0 {
		word := "lines"
		if more == 1 {
			word = "line"
		}
		fmt.Fprintf(&b, "\n  (%d more %s)", more, word)
	}
	return b.String()
}

// ExitWords is how run u ended, for a reason's {detail}: its exit status
// or signal, and the first error it logged (escaped, cut): "exit status
// 1: Error: Cannot find module './config.json'".
func ExitWords(u view.UnitStatus, r RunLog) string {
	s := wait.ExitText(u, "")
	if s == "" {
		s = "no exit status known"
	}
	if first := r.FirstError(); first != "" {
		s += ": " + reason.Clean(first)
	}
	return s
}
