package control

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/journal"
)

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
