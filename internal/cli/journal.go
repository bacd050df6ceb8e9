package cli

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/journal"
)

// projectEvents returns bm2's own events of the given kinds for the
// projects, logged at or after since (journal.ReadEvents: only entries bm2
// wrote itself, never what an app logs under bm2's name).
func (a *App) projectEvents(ctx context.Context, projects []string, kinds []journal.Kind, since time.Time) ([]journal.Event, error) {
	q := journal.EventQuery(projects, kinds...)
	if a.user() {
		q.User = a.uidString()
	}
	return journal.ReadEvents(ctx, a.ReadJournal, q, since)
}

// lastEvent returns the project's most recent event of a kind.
func (a *App) lastEvent(ctx context.Context, project string, kind journal.Kind) (journal.Event, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var last journal.Event
	found := false
	q := journal.EventQuery([]string{project}, kind)
	q.Lines = 1
	_ = a.ReadJournal(ctx, q, func(e journal.Entry) error {
		if ev, ok := a.decode(e); ok {
			last, found = ev, true
		}
		return nil
	})
	return last, found
}
