package view

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/journal"
)

// Reader is what bm2 list, top, metrics, logs and events read of the
// host, and bm2 status of the journal: the projects on the search path,
// their Snapshot over systemd, the kernel's sockets and the scope's
// journal. Package cli fills it from
// package control's client, and its commands read through it alone.
type Reader struct {
	// Registry is the project files on the search path, valid or not,
	// and what the search path holds.
	Registry func() ([]config.Entry, config.Loaded)
	// Find is the registered project named name, or an error that says
	// there is none.
	Find func(name string) (config.Entry, error)
	// Resolve is the registered project an argument names, and the
	// instance when it names one ("api-2"; -1 when it names the
	// project), or an error that says there is none.
	Resolve func(arg string) (config.Entry, int, error)
	// Connect reaches systemd: the Conn reads over it until closed.
	Connect func(ctx context.Context) (Conn, error)
	// Unreached reads without systemd: every instance's state unknown.
	Unreached Conn
	// Sockets are the kernel's, for the Figures of a Snapshot.
	Sockets Sockets
	// Journal runs a query of the scope's journal and calls each for
	// every entry, as it arrives; Decode reads an entry as one of bm2's
	// events, when the scope trusts it as one.
	Journal func(ctx context.Context, q journal.Query, each func(journal.Entry) error) error
	Decode  func(e journal.Entry) (journal.Event, bool)
	// DiskUsage is what the journal's files take, in bytes (in user
	// scope, the user's own files).
	DiskUsage func(ctx context.Context) (int64, error)
}

// Conn reads Snapshots over one connection to systemd (or none:
// Reader.Unreached).
type Conn interface {
	// Snapshot reads the state of entries' projects ([Read]).
	Snapshot(ctx context.Context, entries []config.Entry) Snapshot
	// SnapshotFigures is Snapshot and the Figures of its instances, the
	// kernel's sockets read while the journal is: what a scrape reads.
	SnapshotFigures(ctx context.Context, entries []config.Entry) (Snapshot, Figures)
	// Close releases the connection.
	Close() error
}

// Select is what bm2 list and bm2 metrics show: the named projects, each
// once, in name order, or every registered one when none is named; and
// what the search path holds. A name that is not registered is Find's
// error.
func (r Reader) Select(names []string) ([]config.Entry, config.Loaded, error) {
	entries, found := r.Registry()
	if len(names) > 0 {
		var picked []config.Entry
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				continue // named twice: shown once
			}
			seen[n] = true
			e, err := r.Find(n)
			if err != nil {
				return nil, found, err
			}
			picked = append(picked, e)
		}
		entries = picked
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	}
	return entries, found, nil
}

// Snapshot reads the state of entries over a connection of its own;
// systemd out of reach makes every instance's state unknown, which warn
// says.
func (r Reader) Snapshot(ctx context.Context, entries []config.Entry, warn func(string)) Snapshot {
	snap, _ := r.once(ctx, entries, warn, false)
	return snap
}

// SnapshotFigures is Snapshot with the instances' Figures (Conn's
// SnapshotFigures).
func (r Reader) SnapshotFigures(ctx context.Context, entries []config.Entry, warn func(string)) (Snapshot, Figures) {
	return r.once(ctx, entries, warn, true)
}

func (r Reader) once(ctx context.Context, entries []config.Entry, warn func(string), figures bool) (Snapshot, Figures) {
	conn := r.Unreached
	if len(entries) > 0 {
		c, err := r.Connect(ctx)
		if err != nil {
			warn(fmt.Sprintf("%v; instance states are unknown", err))
		} else {
			conn = c
			defer c.Close()
		}
	}
	if figures {
		return conn.SnapshotFigures(ctx, entries)
	}
	return conn.Snapshot(ctx, entries), Figures{}
}

// Figures reads the Figures of snap's instances from the kernel's
// sockets ([ReadFigures]).
func (r Reader) Figures(ctx context.Context, snap Snapshot) Figures {
	return ReadFigures(ctx, r.Sockets, snap)
}

// Feed reads the named projects (none: every registered one) as bm2
// list does, again and again: bm2 top's frames. It keeps its connection
// to systemd between readings, and connects again after one systemd did
// not answer (it may have been restarted). Readings are one at a time.
type Feed struct {
	r     Reader
	names []string
	conn  Conn // connected at the first reading; again after a failure
}

// Feed is a Feed of the named projects (none: every registered one).
func (r Reader) Feed(names []string) *Feed { return &Feed{r: r, names: names} }

// Read reads the projects once. A name no longer registered, and a
// project file that cannot be read, are warnings of the Snapshot.
func (f *Feed) Read(ctx context.Context) Snapshot {
	entries, found := f.r.Registry()
	var warnings []string
	if len(f.names) > 0 {
		entries, warnings = pickEntries(entries, f.names)
	} else {
		for _, err := range found.Errors {
			warnings = append(warnings, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	if f.conn == nil && len(entries) > 0 {
		c, err := f.r.Connect(ctx)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%v; instance states are unknown", err))
		} else {
			f.conn = c
		}
	}
	conn := f.conn
	if conn == nil {
		conn = f.r.Unreached
	}
	snap := conn.Snapshot(ctx, entries)
	if len(snap.Warnings) > 0 && f.conn != nil {
		// systemd did not answer: connect again for the next reading (it
		// may have been restarted).
		f.Close()
	}
	snap.Warnings = append(warnings, snap.Warnings...)
	return snap
}

// Close closes the connection, if any.
func (f *Feed) Close() {
	if f.conn != nil {
		f.conn.Close()
		f.conn = nil
	}
}

// pickEntries keeps the named projects of entries, in entries' order, and
// says which names are not registered (any more).
func pickEntries(entries []config.Entry, names []string) ([]config.Entry, []string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []config.Entry
	for _, e := range entries {
		if want[e.Name] {
			out = append(out, e)
			delete(want, e.Name)
		}
	}
	var warnings []string
	for _, n := range names {
		if want[n] {
			warnings = append(warnings, fmt.Sprintf("no project %s is registered", n))
			delete(want, n)
		}
	}
	return out, warnings
}
