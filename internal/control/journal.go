package control

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// ProjectEvents returns bm2's own events of the given kinds for the
// projects, logged at or after since (journal.ReadEvents: only entries bm2
// wrote itself, never what an app logs under bm2's name).
func (c *Client) ProjectEvents(ctx context.Context, projects []string, kinds []journal.Kind, since time.Time) ([]journal.Event, error) {
	q := journal.EventQuery(projects, kinds...)
	if c.IsUser() {
		q.User = c.uidString()
	}
	return journal.ReadEvents(ctx, c.ReadJournal, q, since)
}

// lastEvent returns the project's most recent event of a kind.
func (c *Client) lastEvent(ctx context.Context, project string, kind journal.Kind) (journal.Event, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var last journal.Event
	found := false
	q := journal.EventQuery([]string{project}, kind)
	q.Lines = 1
	_ = c.ReadJournal(ctx, q, func(e journal.Entry) error {
		if ev, ok := c.Decode(e); ok {
			last, found = ev, true
		}
		return nil
	})
	return last, found
}

// WriteFailureWindow is how far back bm2 status looks for the files of a
// project that could not be written (state_write_failed): long enough to
// hold a crash.log line lost overnight, short enough that a disk filled
// and freed last week is not news.
const WriteFailureWindow = 24 * time.Hour

// WriteFailures returns the project's state_write_failed events of the
// last WriteFailureWindow, oldest first: at most the last 100, as a full
// disk under a crash loop says it at every crash.
func (c *Client) WriteFailures(ctx context.Context, project string) ([]journal.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	q := journal.EventQuery([]string{project}, journal.StateWriteFailed)
	q.Lines = 100
	if c.IsUser() {
		q.User = c.uidString()
	}
	return journal.ReadEvents(ctx, c.ReadJournal, q, c.Now().Add(-WriteFailureWindow))
}

// JournalUse is what bm2 status says of a project's journal. journald
// keeps no size per unit or project, so there is none here: the oldest
// entry of the project's units says how far back its lines go, and Total
// what the journal takes in all, every unit's entries together.
type JournalUse struct {
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

// JournalUse looks at the journal of p's instances: two cheap runs of
// journalctl, one stopped at the oldest entry, one --disk-usage.
func (c *Client) JournalUse(ctx context.Context, p *config.Project) JournalUse {
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
	u := JournalUse{Total: -1}
	u.Oldest, _, u.Err = journal.Oldest(ctx, c.ReadJournal, q)
	if n, err := c.DiskUsage(ctx); err == nil {
		u.Total = n
	}
	return u
}
