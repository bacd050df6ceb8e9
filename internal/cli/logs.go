package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// logs is `bm2 logs <name | name-i>`: the app's output from the journal,
// as journalctl -u bm2@<name>-<i>.service (for every instance) shows it,
// one line per entry prefixed with the time and the instance, control
// characters escaped (see package termtext).
func (a *App) logs(ctx context.Context, arg string, follow bool, lines, since string) error {
	n, err := parseLines("logs", lines)
	if err != nil {
		return err
	}
	e, idx, err := a.ResolveUnit(arg)
	if err != nil {
		return err
	}
	p, err := control.Usable(e)
	if err != nil {
		return err
	}
	q := journal.Query{Lines: n, Follow: follow, Since: since}
	ids := control.AllInstances(p)
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
		if !follow {
			return nil
		}
		q.Since = journal.SinceTime(a.Now())
	}
	count := 0
	err = a.ReadJournal(ctx, q, func(e journal.Entry) error {
		count++
		// The app wrote the message, and may have set the identifier:
		// each line is shown escaped (termtext), never obeyed.
		prefix := fmt.Sprintf("%s %-*s | ", e.Time().Local().Format(timeLayout), width, termtext.Escape(logSource(e)))
		if e["_PID"] == "1" || e["_SYSTEMD_UNIT"] == "init.scope" || e["_SYSTEMD_USER_UNIT"] == "init.scope" {
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
	raw := a.JournalctlUnit(units.Instance(p.Name, ids[0]))
	if len(ids) > 1 {
		raw = a.JournalctlUnit(fmt.Sprintf("'bm2@%s-*'", p.Name))
	}
	return a.journalDone(ctx, err, follow, count, "log lines of "+label, raw)
}

// logSource is the instance an app log entry comes from: the bm2 unit that
// logged it or that systemd logged about, as "api-0".
func logSource(e journal.Entry) string {
	for _, k := range []string{"_SYSTEMD_UNIT", "UNIT", "OBJECT_SYSTEMD_UNIT", "_SYSTEMD_USER_UNIT", "USER_UNIT", "OBJECT_SYSTEMD_USER_UNIT"} {
		if n, i, ok := units.ParseInstance(e[k]); ok && strings.HasPrefix(e[k], "bm2@") {
			return units.InstanceID(n, i)
		}
	}
	return e["SYSLOG_IDENTIFIER"]
}
