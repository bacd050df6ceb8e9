package control

import (
	"context"
	"github.com/bm2dev/bm2/internal/state"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/history"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// Snapshot reads the state of entries' projects (view.Read); sd is nil
// when systemd is not reachable.
func (c *Client) Snapshot(ctx context.Context, entries []config.Entry, sd Systemd) view.Snapshot {
	snap, _ := view.Read(ctx, snapshotHost{c}, sd, nil, entries)
	return snap
}

// SnapshotFigures is Snapshot and the Figures of its instances
// (view.ReadFigures), the kernel's sockets read while the journal is:
// what a scrape reads, in less time than one after the other.
func (c *Client) SnapshotFigures(ctx context.Context, entries []config.Entry, sd Systemd) (view.Snapshot, view.Figures) {
	return view.Read(ctx, snapshotHost{c}, sd, c.Sockets, entries)
}

// snapshotHost is the scope as what a Snapshot reads of it
// (view.Host).
type snapshotHost struct{ *Client }

func (h snapshotHost) Now() time.Time { return h.Client.Now() }

func (h snapshotHost) HealthDir(project string) string {
	return h.Scope().Layout().HealthDir(project)
}

func (h snapshotHost) AccountingGap() string {
	if !h.Scope().IsUser() {
		return ""
	}
	return h.Accounting(h.Scope().Layout().UID)
}

// ProjectEvents are the journal's events of kinds of projects since then
// (history.ProjectEvents).
func (h snapshotHost) ProjectEvents(ctx context.Context, projects []string, kinds []journal.Kind, since time.Time) ([]journal.Event, error) {
	return history.ProjectEvents(ctx, h.ReadJournal, journalUser(h.Client), projects, kinds, since)
}

// ErroredMark reads a project's errored mark (state.Dir.ErroredMark).
func (h snapshotHost) ErroredMark(project string) (string, bool, error) {
	return h.Layout.State().ErroredMark(project)
}

// InstanceMark reads an instance's errored mark (state.Dir.InstanceMark).
func (h snapshotHost) InstanceMark(instance string) (state.Mark, bool) {
	return h.Layout.State().InstanceMark(instance)
}

// MarkOf is an instance's errored mark while it is down (explainHost.MarkOf).
func (h snapshotHost) MarkOf(p *config.Project, i int, u view.UnitStatus) (state.Mark, bool) {
	return h.Explainer().MarkOf(p, i, u)
}
