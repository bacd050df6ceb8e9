package view

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// fakeConn reads a Snapshot of the entries it is given, with warnings.
type fakeConn struct {
	warnings []string
	closed   *int
}

func (c fakeConn) Snapshot(_ context.Context, entries []config.Entry) Snapshot {
	snap := Snapshot{Warnings: append([]string(nil), c.warnings...)}
	for _, e := range entries {
		snap.Projects = append(snap.Projects, ProjectSnapshot{Entry: e})
	}
	return snap
}

func (c fakeConn) SnapshotFigures(ctx context.Context, entries []config.Entry) (Snapshot, Figures) {
	return c.Snapshot(ctx, entries), Figures{}
}

func (c fakeConn) Close() error {
	if c.closed != nil {
		*c.closed++
	}
	return nil
}

// A Feed keeps its connection between readings, connects again after
// one systemd did not answer, and says which names are gone.
func TestFeed(t *testing.T) {
	var connects, closed int
	answer := []string(nil)
	r := Reader{
		Registry: func() ([]config.Entry, config.Loaded) {
			return []config.Entry{{Name: "api"}, {Name: "web"}}, config.Loaded{}
		},
		Connect: func(context.Context) (Conn, error) {
			connects++
			if connects == 1 {
				return nil, errors.New("no bus")
			}
			return fakeConn{warnings: answer, closed: &closed}, nil
		},
		Unreached: fakeConn{},
	}
	f := r.Feed([]string{"web", "gone"})
	snap := f.Read(context.Background())
	if len(snap.Projects) != 1 || snap.Projects[0].Entry.Name != "web" ||
		strings.Join(snap.Warnings, "|") != "no project gone is registered|no bus; instance states are unknown" {
		t.Errorf("first reading: %+v", snap)
	}
	f.Read(context.Background())
	f.Read(context.Background())
	if connects != 2 || closed != 0 {
		t.Errorf("%d connects, %d closes, want 2 and 0", connects, closed)
	}
	answer = []string{"Units: connection reset"}
	f.Close()
	f.Read(context.Background()) // connects again, and drops each connection that failed
	f.Read(context.Background())
	if connects != 4 || closed != 3 {
		t.Errorf("%d connects, %d closes, want 4 and 3", connects, closed)
	}
}

// Select picks the named projects once each, in name order.
func TestSelect(t *testing.T) {
	r := Reader{
		Registry: func() ([]config.Entry, config.Loaded) { return nil, config.Loaded{} },
		Find: func(name string) (config.Entry, error) {
			if name == "nope" {
				return config.Entry{}, errors.New("no such project: nope")
			}
			return config.Entry{Name: name}, nil
		},
	}
	got, _, err := r.Select([]string{"web", "api", "web"})
	if err != nil || len(got) != 2 || got[0].Name != "api" || got[1].Name != "web" {
		t.Errorf("%v %v", got, err)
	}
	if _, _, err := r.Select([]string{"api", "nope"}); err == nil {
		t.Error("an unregistered name selected")
	}
}
