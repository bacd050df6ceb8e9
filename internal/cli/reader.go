package cli

import (
	"context"
	"strconv"

	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// reader is what bm2 list, top, metrics, logs and events read the host
// through, and bm2 status the journal (view.Reader): the client's registry, its Snapshots over
// systemd, the kernel's sockets and the scope's journal. It is the one
// place those commands reach the client for what they read.
func (a *App) reader() view.Reader {
	return view.Reader{
		Registry: a.c.Projects().Entries,
		Find:     a.c.Projects().Find,
		Resolve:  a.c.Projects().Resolve,
		Connect: func(ctx context.Context) (view.Conn, error) {
			sd, err := a.c.Connect(ctx)
			if err != nil {
				return nil, err
			}
			return snapshotConn{a.c, sd}, nil
		},
		Unreached: snapshotConn{c: a.c},
		Sockets:   a.c.Sockets,
		Journal:   a.c.ReadJournal,
		Decode: func(e journal.Entry) (journal.Event, bool) {
			return journal.DecodeFrom(e, strconv.Itoa(a.c.Scope().Layout().UID))
		},
		DiskUsage: a.c.DiskUsage,
	}
}

// snapshotConn reads Snapshots over sd (nil: without systemd), as the
// client reads them (control.Client.Snapshot).
type snapshotConn struct {
	c  *control.Client
	sd Systemd
}

func (s snapshotConn) Snapshot(ctx context.Context, entries []entry) view.Snapshot {
	return s.c.Snapshot(ctx, entries, s.sd)
}

func (s snapshotConn) SnapshotFigures(ctx context.Context, entries []entry) (view.Snapshot, view.Figures) {
	return s.c.SnapshotFigures(ctx, entries, s.sd)
}

func (s snapshotConn) Close() error {
	if s.sd == nil {
		return nil
	}
	return s.sd.Close()
}
