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
