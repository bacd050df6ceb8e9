package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// defaultLines is how many lines bm2 logs and bm2 events show by default.
const defaultLines = "20"

// parseLines reads a -n argument: a positive number, or "all" (0).
func parseLines(cmd, s string) (int, error) {
	if s == "all" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, usageErr(cmd, "%s: -n %q: want a number of lines, or all", cmd, s)
	}
	if n == 0 {
		n = -1 // journalctl -n 0: none of the old ones
	}
	return n, nil
}

// eventJSON is one line of bm2 events --json. Keys are stable; absent
// values are null.
type eventJSON struct {
	Time      string         `json:"time"` // RFC 3339, UTC, microseconds
	Event     *string        `json:"event"`
	Project   *string        `json:"project"`
	Instance  *string        `json:"instance"`
	Reason    *string        `json:"reason"`
	Level     *string        `json:"level"`
	Message   termtext.JSON  `json:"message"` // a string, or its bytes when not UTF-8
	Detail    *termtext.JSON `json:"detail"`
	MessageID *string        `json:"message_id"`
}

func nullableText(s string) *termtext.JSON {
	if s == "" {
		return nil
	}
	t := termtext.JSON(s)
	return &t
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// eventsCmd is `bm2 events [name | name-i]`.
func (a *App) eventsCmd(ctx context.Context, args []string, follow, asJSON bool, lines, since string) error {
	n, err := parseLines("events", lines)
	if err != nil {
		return err
	}
	// Only what bm2 wrote itself: an app cannot add to this list.
	rd := a.reader()
	q := journal.Query{BM2: true, Generator: true, Lines: n, Follow: follow, Since: since}
	what := "events"
	if len(args) > 0 {
		project, instance, err := eventsFilter(rd, args[0])
		if err != nil {
			return err
		}
		q.Generator = false
		q.Matches = append(q.Matches, journal.FieldProject+"="+project)
		what = "events of " + project
		if instance != "" {
			q.Matches = append(q.Matches, journal.FieldInstance+"="+instance)
			what = "events of " + instance
		}
	}
	if q.Lines < 0 {
		q.Lines = 0
		if !follow {
			return nil
		}
		q.Since = journal.SinceTime(a.c.Now())
	}

	// The header comes with the first event, or at once when following.
	header := func() {
		if !asJSON {
			fmt.Fprintf(a.Out, eventFormat, "TIME", "PROJECT", "INSTANCE", "EVENT", "REASON", "MESSAGE")
		}
	}
	if follow {
		header()
	}
	enc := json.NewEncoder(a.Out)
	enc.SetEscapeHTML(false)
	count := 0
	err = rd.Journal(ctx, q, func(e journal.Entry) error {
		ev, ok := rd.Decode(e)
		if !ok {
			return nil
		}
		count++
		if count == 1 && !follow {
			header()
		}
		if asJSON {
			return enc.Encode(eventJSON{
				Time:  ev.Time.UTC().Format(jsonTimeLayout),
				Event: nullable(string(ev.Kind)), Project: nullable(ev.Project), Instance: nullable(ev.Instance),
				Reason: nullable(string(ev.Reason)), Level: nullable(ev.Level), Message: termtext.JSON(ev.Message),
				Detail: nullableText(ev.Detail), MessageID: nullable(ev.MessageID),
			})
		}
		esc := termtext.EscapeField
		_, err := fmt.Fprintf(a.Out, eventFormat, ev.Time.Local().Format(timeLayout), esc(orDash(ev.Project)),
			esc(orDash(ev.Instance)), esc(orDash(string(ev.Kind))), esc(orDash(string(ev.Reason))), oneLineText(ev.Message))
		return err
	})
	return a.journalDone(ctx, err, follow, count, what, "journalctl -t bm2")
}

// eventFormat is a line of bm2 events: fixed widths, so that lines
// printed as they arrive (-f) line up with the first ones.
const eventFormat = "%-19s  %-10s  %-12s  %-23s  %-17s  %s\n"

// timeLayout is how bm2 logs and bm2 events show a time (local).
const timeLayout = "2006-01-02 15:04:05"

// jsonTimeLayout is a time in --json: RFC 3339, to the microsecond (UTC).
const jsonTimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// eventsFilter turns events' argument into a project and maybe one of its
// instances. Events outlive projects, so an unregistered name is fine as
// long as it could be a project's.
func eventsFilter(rd view.Reader, arg string) (project, instance string, err error) {
	if e, err := rd.Find(arg); err == nil {
		return e.Name, "", nil
	}
	if name, i, ok := units.ParseInstance(arg); ok {
		if _, err := rd.Find(name); err == nil {
			return name, units.InstanceID(name, i), nil
		}
	}
	if !projectNameRE.MatchString(arg) || len(arg) > 64 {
		return "", "", usageErr("events", "events: %q is not a project name ([a-z0-9][a-z0-9_-]*)", arg)
	}
	return arg, "", nil
}

// journalDone turns the end of a journal read into the command's result:
// an interrupted -f is the normal way to stop; no entries at all is said
// on stderr, with a hint when the user cannot read the system journal.
func (a *App) journalDone(ctx context.Context, err error, follow bool, count int, what, raw string) error {
	if follow && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, journal.ErrRestricted) {
		if count == 0 {
			return fail(control.Failed, journal.RestrictedHint, fmt.Errorf("no %s: %w", what, err))
		}
		fmt.Fprintf(a.Err, "bm2: warning: %v, so some entries may be missing; %s\n", err, journal.RestrictedHint)
		return nil
	}
	if errors.Is(err, journal.ErrUserVolatile) {
		return fail(control.Failed, journal.UserVolatileHint, fmt.Errorf("no %s: %w", what, err))
	}
	if err != nil {
		return err
	}
	if count == 0 && !follow {
		fmt.Fprintf(a.Err, "bm2: no %s in the journal (%s shows the same)\n", what, raw)
	}
	return nil
}

// oneLineText keeps a message on one line, its control characters
// escaped.
func oneLineText(s string) string {
	s = strings.TrimRight(s, "\n")
	return termtext.Escape(strings.ReplaceAll(s, "\n", " ⏎ "))
}

// projectNameRE is what a project name looks like (bm2.toml(5)).
var projectNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
