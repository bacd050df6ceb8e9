// Package history is what the journal says of a project: bm2's own
// events of it, the files bm2 could not write for it, and how far back its
// lines go.
package history

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Reader reads the journal's entries of a query (journal.Read).
type Reader = func(context.Context, journal.Query, func(journal.Entry) error) error

// ProjectEvents returns bm2's own events of the given kinds for the
// projects, logged at or after since, from read (Env.ReadJournal) as
// user (the UID of user scope, "" in system scope) (journal.ReadEvents: only entries bm2
// wrote itself, never what an app logs under bm2's name).
func ProjectEvents(ctx context.Context, read Reader, user string, projects []string, kinds []journal.Kind, since time.Time) ([]journal.Event, error) {
	q := journal.EventQuery(projects, kinds...)
	if user != "" {
		q.User = user
	}
	return journal.ReadEvents(ctx, read, q, since)
}

// WriteFailureWindow is how far back bm2 status looks for the files of a
// project that could not be written (state_write_failed): long enough to
// hold a crash.log line lost overnight, short enough that a disk filled
// and freed last week is not news.
const WriteFailureWindow = 24 * time.Hour

// WriteFailures returns the project's state_write_failed events of the
// WriteFailureWindow before now, oldest first: at most the last 100, as a
// full disk under a crash loop says it at every crash; read is the
// scope's journal (Env.ReadJournal), user the UID of user scope ("" in
// system scope).
func WriteFailures(ctx context.Context, read Reader, user, project string, now time.Time) ([]journal.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	q := journal.EventQuery([]string{project}, journal.StateWriteFailed)
	q.Lines = 100
	if user != "" {
		q.User = user
	}
	return journal.ReadEvents(ctx, read, q, now.Add(-WriteFailureWindow))
}

// Use is what bm2 status says of a project's journal. journald
// keeps no size per unit or project, so there is none here: the oldest
// entry of the project's units says how far back its lines go, and Total
// what the journal takes in all, every unit's entries together.
type Use struct {
	// Oldest is the time of the oldest entry of the project's instances
	// (the surge's too), as journalctl -u selects them: what they logged
	// and what systemd logged about them. Zero when there is none.
	Oldest time.Time
	// Total is what journalctl --disk-usage says the journal files take
	// (in user scope, the user's own), in bytes; -1 when not known.
	Total int64
	// Err is why the project's entries could not be read
	// (journal.ErrRestricted for a user outside adm and
	// systemd-journal); Oldest is not known then.
	Err error
}

// UseOf looks at the journal of p's instances: two cheap runs of
// journalctl, one stopped at the oldest entry (read, Env.ReadJournal),
// one --disk-usage (diskUsage, Env.DiskUsage).
func UseOf(ctx context.Context, read Reader, diskUsage func(context.Context) (int64, error), p *config.Project) Use {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ids := view.AllInstances(p)
	if p.Mode == config.Cluster {
		ids = append(ids, units.Surge) // what it logged during reloads
	}
	// The units by name, not 'bm2@api-*', which is project api-v2's too.
	q := journal.Query{Fields: []string{journal.FieldRealtime}} // the time alone
	for _, i := range ids {
		q.Units = append(q.Units, units.Instance(p.Name, i))
	}
	u := Use{Total: -1}
	u.Oldest, _, u.Err = journal.Oldest(ctx, read, q)
	if n, err := diskUsage(ctx); err == nil {
		u.Total = n
	}
	return u
}
