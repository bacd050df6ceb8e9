package control

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/journal"
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
