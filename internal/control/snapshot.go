package control

import (
	"context"
	"fmt"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Snapshot is what bm2 list and bm2 status show, read at one moment:
// systemd's view of every instance, bm2's errored marks and the reusePort
// verdicts in the journal. Rendering it (package cli) reads nothing else,
// so that a table is a pure function of a Snapshot.
type Snapshot struct {
	Now      time.Time
	Projects []ProjectSnapshot
	// Events are the reusePort probe's events since the oldest running
	// instance of a cluster-mode project came online; EventsRead tells
	// whether the journal was read (else every verdict is unknown).
	Events     []journal.Event
	EventsRead bool
	// Warnings are what systemd could not say, one line each.
	Warnings []string
}

// ProjectSnapshot is one registered project at the moment of a Snapshot.
type ProjectSnapshot struct {
	Entry config.Entry
	// IDs are the instances shown: 0..N-1, and units.Surge while a
	// reload's surge instance runs.
	IDs []int
	// Statuses are the IDs' unit states, in order; nil when systemd was
	// not reachable or did not answer.
	Statuses []UnitStatus
	// Probes are the IDs' probe units' states, in order, for a cluster
	// project with an instance running; nil otherwise.
	Probes []UnitStatus
	// Errored is the project's errored mark (Mark its reason).
	Errored bool
	Mark    string
	// Marks are the instances' own errored marks that hold for their
	// current run, by index in IDs.
	Marks map[int]state.Mark
	// Warning says why the errored mark could not be read, if it could not.
	Warning string
}

// Snapshot reads the state of entries' projects; sd is nil when systemd
// is not reachable.
func (c *Client) Snapshot(ctx context.Context, entries []config.Entry, sd Systemd) Snapshot {
	snap := Snapshot{Now: c.Now()}
	var probed []string // cluster-mode projects with a running instance
	var since time.Time // when the oldest of their running instances came online
	for _, e := range entries {
		ps := ProjectSnapshot{Entry: e}
		p := e.Project
		if e.Err != nil || p == nil {
			snap.Projects = append(snap.Projects, ps)
			continue
		}
		ps.IDs = AllInstances(p)
		if sd != nil {
			statuses, err := sd.Units(ctx, InstanceNames(p))
			if err != nil {
				snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %v", p.Name, err))
				statuses = nil
			}
			running := false
			for _, u := range statuses {
				if st, _ := InstanceState(u); st == StateOnline && !u.ActiveEnter.IsZero() {
					running = true
					if since.IsZero() || u.ActiveEnter.Before(since) {
						since = u.ActiveEnter
					}
				}
			}
			if running && p.Mode == config.Cluster {
				probed = append(probed, p.Name)
			}
			if p.Mode == config.Cluster && err == nil {
				// Loaded, not Units: asking for it would load it.
				if l, err := sd.Loaded(ctx, []string{units.Instance(p.Name, units.Surge)}); err == nil && len(l) == 1 && SurgeActive(l[0]) {
					if st, err := sd.Units(ctx, []string{l[0].Name}); err == nil {
						ps.IDs = append(ps.IDs, units.Surge)
						statuses = append(statuses, st[0])
						if s := st[0].ActiveEnter; !s.IsZero() && (since.IsZero() || s.Before(since)) {
							since = s // its verdict too
						}
					}
				}
			}
			ps.Statuses = statuses
			if running && p.Mode == config.Cluster && statuses != nil {
				names := make([]string, len(ps.IDs))
				for k, i := range ps.IDs {
					names[k] = units.Probe(p.Name, i)
				}
				if pr, err := sd.Units(ctx, names); err == nil {
					ps.Probes = pr
				}
			}
		}
		mark, errored, err := c.ErroredMark(p.Name)
		if err != nil {
			ps.Warning = fmt.Sprintf("%s: read errored state: %v", p.Name, err)
		}
		ps.Errored, ps.Mark = errored, mark
		if !errored {
			ps.Marks = map[int]state.Mark{}
			for k, i := range ps.IDs {
				var m state.Mark
				var ok bool
				if ps.Statuses != nil {
					m, ok = c.MarkOf(p, i, ps.Statuses[k])
				} else {
					m, ok = c.InstanceMark(units.InstanceID(p.Name, i))
				}
				if ok {
					ps.Marks[k] = m
				}
			}
		}
		snap.Projects = append(snap.Projects, ps)
	}
	if len(probed) > 0 {
		evs, err := c.ProjectEvents(ctx, probed, ReuseportKinds, since)
		snap.Events, snap.EventsRead = evs, err == nil
	}
	return snap
}

// InstanceView is what bm2 list and bm2 metrics say of one instance of a
// Snapshot beyond its unit's figures: its state and why, and the probe's
// verdict.
type InstanceView struct {
	// State is one of InstanceStates (or systemd's own word for a state
	// bm2 has none for), Reason why, "" when there is nothing to say.
	State, Reason string
	// Reuseport is the reusePort probe's verdict on the current run of an
	// online cluster-mode instance (one of ReuseportVerdicts), or missing
	// for a project the probe stopped; "" otherwise, and when the journal
	// was not read.
	Reuseport string
	// Holder is who holds the port of an instance errored as
	// port_in_use (its mark, written by the exit hook).
	Holder string
}

// View is ps's k-th instance as bm2 list shows it: a pure function of the
// Snapshot.
func (s Snapshot) View(ps ProjectSnapshot, k int) InstanceView {
	p, i := ps.Entry.Project, ps.IDs[k]
	v := InstanceView{State: StateUnknown}
	if ps.Statuses != nil {
		u := ps.Statuses[k]
		v.State, v.Reason = ProjectInstanceState(u, p.MaxRestarts)
		if i == units.Surge && v.Reason == "" {
			v.Reason = "surge of a reload"
		}
		if p.Mode == config.Cluster && v.State == StateOnline && s.EventsRead {
			verdict, _ := ReuseportVerdict(u, units.InstanceID(p.Name, i), s.Events)
			if verdict == "" {
				verdict = VerdictPending
				if k < len(ps.Probes) && ProbeLost(u, ps.Probes[k], s.Now) {
					verdict = VerdictUnprobed
				}
			}
			v.Reuseport = verdict
		}
	}
	if m, ok := ps.Marks[k]; ok {
		v.State, v.Reason, v.Holder = StateErrored, m.Reason, m.Detail
	}
	if ps.Errored {
		v.State, v.Reason = StateErrored, ps.Mark
		if v.Reason == "" {
			v.Reason = "errored"
		}
		if ps.Mark == string(reason.ReuseportMissing) || ps.Mark == string(reason.LoopbackOnly) {
			v.Reuseport = VerdictMissing
		}
	}
	return v
}
