package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// logsOptions are bm2 logs' flags.
type logsOptions struct {
	follow, json       bool
	lines, since, grep string
	// systemd: also what systemd logged about the instances ("Started
	// ...", "Main process exited ..."), which is left out otherwise.
	systemd bool
}

// logs is `bm2 logs <name | name-i>`: the app's output from the journal,
// as journalctl -u bm2@<name>-<i>.service (for every instance) shows it
// but for systemd's own lines about the instances (with --systemd, those
// too), one line per entry prefixed with the time and the instance,
// control characters escaped (see package termtext); with --json, one
// JSON object per entry (logRecord).
func (a *App) logs(ctx context.Context, arg string, o logsOptions) error {
	n, err := parseLines("logs", o.lines)
	if err != nil {
		return err
	}
	rd := a.reader()
	e, idx, err := rd.Resolve(arg)
	if err != nil {
		return err
	}
	p, err := control.Usable(e)
	if err != nil {
		return err
	}
	// systemd's lines ("Started", "Main process exited", "Scheduled
	// restart job", ...) outnumber a crash-looping app's own: left out
	// of the query, so that -n counts the app's lines.
	q := journal.Query{Lines: n, Follow: o.follow, Since: o.since, Grep: o.grep, NoManager: !o.systemd}
	ids := view.AllInstances(p)
	if p.Mode == config.Cluster {
		ids = append(ids, units.Surge) // what it served during reloads
	}
	label := p.Name
	if idx >= 0 || idx == units.Surge {
		ids, label = []int{idx}, units.InstanceID(p.Name, idx)
	}
	width := 0
	for _, i := range ids {
		q.Units = append(q.Units, units.Instance(p.Name, i))
		if i != units.Surge || len(ids) == 1 {
			width = max(width, len(units.InstanceID(p.Name, i)))
		}
	}
	if q.Lines < 0 {
		q.Lines = 0
		if !o.follow {
			return nil
		}
		q.Since = journal.SinceTime(a.c.Now())
	}
	uid := strconv.Itoa(a.c.Scope().Layout().UID) // whose entries are bm2's (journal.TrustedFrom)
	enc := json.NewEncoder(a.Out)
	enc.SetEscapeHTML(false)
	count := 0
	err = rd.Journal(ctx, q, func(e journal.Entry) error {
		count++
		if o.json {
			return enc.Encode(logRecord(e, uid))
		}
		// The app wrote the message, and may have set the identifier:
		// each line is shown escaped (termtext), never obeyed.
		prefix := fmt.Sprintf("%s %-*s | ", e.Time().Local().Format(timeLayout), width, termtext.Escape(logSource(e)))
		if systemdLine(e) {
			prefix += "systemd: "
		}
		msg := strings.TrimRight(e["MESSAGE"], "\n")
		for _, line := range strings.Split(msg, "\n") {
			if _, err := fmt.Fprintf(a.Out, "%s%s\n", prefix, termtext.Escape(line)); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, journal.ErrPattern) {
		return fail(control.BadArg, "the pattern is PCRE2, as journalctl --grep takes it (journalctl(1)), "+
			"and needs a journalctl built with PCRE2 and libpcre2-8 installed", fmt.Errorf("logs --grep: %w", err))
	}
	raw := a.c.Scope().Layout().JournalctlUnit(units.Instance(p.Name, ids[0]))
	if len(ids) > 1 {
		raw = a.c.Scope().Layout().JournalctlUnit(fmt.Sprintf("'bm2@%s-*'", p.Name))
	}
	what := "log lines of " + label
	if o.grep != "" {
		what += fmt.Sprintf(" matching %q", o.grep)
		raw += " --grep=" + shellWord(o.grep)
	}
	if err == nil && count == 0 && !o.follow && !o.systemd {
		fmt.Fprintf(a.Err, "bm2: no %s in the journal (systemd's own lines about it are left out: `bm2 logs %s --systemd` adds them; %s shows both)\n", what, arg, raw)
		return nil
	}
	return a.journalDone(ctx, err, o.follow, count, what, raw)
}

// logJSON is one line of bm2 logs --json. Keys are stable; absent values
// are null.
type logJSON struct {
	Time     string        `json:"time"`     // RFC 3339, UTC, microseconds
	Instance *string       `json:"instance"` // "api-0", "api-surge"
	PID      *int64        `json:"pid"`      // of the process that logged it
	Stream   string        `json:"stream"`   // see logStream
	Message  termtext.JSON `json:"message"`  // a string, or its bytes when not UTF-8
}

// logRecord is the --json form of an entry of an instance's journal; uid
// is whose entries are bm2's own (journal.TrustedFrom). The message is the
// entry's, exactly, a line of several included: JSON escapes what a
// terminal would obey.
func logRecord(e journal.Entry, uid string) logJSON {
	r := logJSON{
		Time:     e.Time().UTC().Format(jsonTimeLayout),
		Instance: nullable(logInstance(e)),
		Stream:   logStream(e, uid),
		Message:  termtext.JSON(e[journal.FieldMessage]),
	}
	if pid, err := strconv.ParseInt(e["_PID"], 10, 64); err == nil && pid > 0 {
		r.PID = &pid
	}
	return r
}

// logStream says where a line of an instance's journal comes from:
//   - "bm2": bm2 itself, about the instance (an entry journal.TrustedFrom
//     believes: an app that logs under bm2's name is not bm2);
//   - "systemd": the service manager, about the unit;
//   - "stdout": the app's standard output or standard error. bm2's units
//     send both to one journal stream (StandardError=inherit), and
//     journald records the transport, not which of the two a line was
//     written to;
//   - "unknown": anything else (an app logging through the journal's or
//     syslog's socket, a core dump).
func logStream(e journal.Entry, uid string) string {
	switch {
	case journal.TrustedFrom(e, uid):
		return "bm2"
	case systemdLine(e):
		return "systemd"
	case e[journal.FieldTransport] == "stdout":
		return "stdout"
	}
	return "unknown"
}

// systemdLine tells whether the service manager logged the entry (fields
// journald sets, which no app can).
func systemdLine(e journal.Entry) bool {
	return e["_PID"] == "1" || e["_SYSTEMD_UNIT"] == "init.scope" || e["_SYSTEMD_USER_UNIT"] == "init.scope"
}

// logSource is the instance an app log entry comes from: the bm2 unit that
// logged it or that systemd logged about, as "api-0"; otherwise its
// identifier.
func logSource(e journal.Entry) string {
	if id := logInstance(e); id != "" {
		return id
	}
	return e["SYSLOG_IDENTIFIER"]
}

// logInstance is the bm2 instance an entry is from or about, as "api-0",
// or "". The fields journald sets come first: an app may put any UNIT= in
// what it logs, not its own _SYSTEMD_UNIT.
func logInstance(e journal.Entry) string {
	for _, k := range []string{"_SYSTEMD_UNIT", "_SYSTEMD_USER_UNIT", "UNIT", "USER_UNIT", "OBJECT_SYSTEMD_UNIT", "OBJECT_SYSTEMD_USER_UNIT", "COREDUMP_UNIT", "COREDUMP_USER_UNIT"} {
		if n, i, ok := units.ParseInstance(e[k]); ok && strings.HasPrefix(e[k], "bm2@") {
			return units.InstanceID(n, i)
		}
	}
	return ""
}

// shellWord quotes s for a shell command line shown as a hint.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,/:=@%+-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
