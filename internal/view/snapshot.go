package view

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/wording"
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
	// Accounting says why, in user scope, a running instance has no
	// memory or CPU figure ([Host.AccountingGap]); "" when all have them.
	Accounting string
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
	// Health is the state file of the project's health check (package
	// health), nil without health_path or before its first check.
	Health *health.State
}

// Host is what reading a Snapshot asks of the scope besides systemd:
// the clock, bm2's errored marks, the health checks' state files and the
// journal.
type Host interface {
	// Now is the moment of the Snapshot.
	Now() time.Time
	// ErroredMark is a project's errored mark (package state) and its
	// reason.
	ErroredMark(project string) (reason string, errored bool, err error)
	// MarkOf is the errored mark of instance i of p, unit u, that holds
	// for u's current run; InstanceMark is an instance's mark, when
	// systemd did not say what its unit is doing.
	MarkOf(p *config.Project, i int, u UnitStatus) (state.Mark, bool)
	InstanceMark(instance string) (state.Mark, bool)
	// HealthDir is the directory of the state file of a project's
	// health checks (layout.Layout.HealthDir).
	HealthDir(project string) string
	// AccountingGap says why, in user scope, an instance has no memory
	// or CPU figure ([Snapshot.Accounting]); "" in system scope.
	AccountingGap() string
	// ProjectEvents are the journal's events of kinds of projects,
	// since a moment.
	ProjectEvents(ctx context.Context, projects []string, kinds []journal.Kind, since time.Time) ([]journal.Event, error)
}

// Units is what reading a Snapshot asks of systemd (the bm2 command's
// Systemd, sysd.Conn).
type Units interface {
	sysd.Briefer
	sysd.Lister
}

// Read reads the state of entries' projects; sd is nil when systemd is
// not reachable. With sockets, it reads the Figures of the instances too
// ([ReadFigures]), the kernel's sockets while the journal is read: what
// a scrape reads, in less time than one after the other; without, the
// Figures are empty.
//
// It asks systemd in a few batches for all projects at once, not project
// by project: every instance's unit, then which surges are loaded (one
// listing), the running surges' units, and last, once the journal has
// told the verdicts, the probes of the instances still waiting for one
// (what tells pending from unprobed). A scrape of a hundred projects is a
// few round trips of many calls each (see [Units.Brief]), not hundreds
// in a row. It reads only what a Snapshot's readers show
// ([Units.Brief]); bm2 status reads the rest of an instance itself.
func Read(ctx context.Context, h Host, sd Units, sockets Sockets, entries []config.Entry) (Snapshot, Figures) {
	snap := Snapshot{Now: h.Now()}
	snap.Projects = make([]ProjectSnapshot, len(entries))
	var valid []int // indexes of the projects that have instances
	for j, e := range entries {
		snap.Projects[j] = ProjectSnapshot{Entry: e}
		if e.Err == nil && e.Project != nil {
			snap.Projects[j].IDs = AllInstances(e.Project)
			valid = append(valid, j)
		}
	}
	if sd != nil {
		readStatuses(ctx, sd, &snap, valid)
	}
	var figs Figures
	figured := make(chan struct{})
	withFigures := sockets != nil
	if withFigures {
		// What the sockets are read by is the statuses alone: a copy of
		// the projects, since the marks and probes are written to snap
		// meanwhile.
		mine := Snapshot{Projects: append([]ProjectSnapshot(nil), snap.Projects...)}
		go func() {
			defer close(figured)
			figs = readSockets(ctx, sockets, mine)
		}()
	} else {
		close(figured)
	}
	var probed []string // cluster-mode projects with a running instance
	var since time.Time // when the oldest of their running instances (or surges) came online
	for _, j := range valid {
		ps := &snap.Projects[j]
		if ps.Entry.Project.Mode != config.Cluster {
			continue
		}
		running := false
		for k, u := range ps.Statuses {
			online := !u.ActiveEnter.IsZero()
			if ps.IDs[k] != units.Surge {
				st, _ := InstanceState(u)
				online = online && st == StateOnline
				running = running || online
			}
			if online && (since.IsZero() || u.ActiveEnter.Before(since)) {
				since = u.ActiveEnter
			}
		}
		if running {
			probed = append(probed, ps.Entry.Name)
		}
	}
	for _, j := range valid {
		readMarks(h, &snap.Projects[j])
		readHealth(h, &snap.Projects[j])
	}
	if unaccounted(snap.Projects) {
		snap.Accounting = h.AccountingGap()
	}
	if len(probed) > 0 {
		evs, err := h.ProjectEvents(ctx, probed, ReuseportKinds, since)
		snap.Events, snap.EventsRead = evs, err == nil
	}
	if sd != nil && snap.EventsRead {
		readProbes(ctx, sd, &snap, valid)
	}
	<-figured
	if withFigures {
		confirmLatencies(&figs, snap)
	}
	return snap, figs
}

// readStatuses fills in the Statuses of the valid projects of snap, and
// their surges (IDs and Statuses) where one runs.
func readStatuses(ctx context.Context, sd Units, snap *Snapshot, valid []int) {
	var names []string
	for _, j := range valid {
		names = append(names, InstanceNames(snap.Projects[j].Entry.Project)...)
	}
	all, err := sd.Brief(ctx, names)
	var surges []string
	off := 0
	for _, j := range valid {
		ps := &snap.Projects[j]
		p := ps.Entry.Project
		n := len(ps.IDs)
		if err != nil {
			// Ask again for this project alone: which ones systemd
			// could not say. Not when systemd is out of reach (or the
			// caller gave up): that would be one more wait a project.
			perr := err
			var st []UnitStatus
			if !sysd.IsUnreachable(err) && ctx.Err() == nil {
				st, perr = sd.Brief(ctx, InstanceNames(p))
			}
			if perr != nil {
				snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %v", p.Name, perr))
				continue
			}
			ps.Statuses = st
		} else {
			ps.Statuses = all[off : off+n : off+n]
		}
		off += n
		if p.Mode == config.Cluster {
			surges = append(surges, units.Instance(p.Name, units.Surge))
		}
	}
	if len(surges) == 0 {
		return
	}
	// Loaded, not Units: asking for a unit would load it.
	loaded, err := sd.Loaded(ctx, surges)
	if err != nil {
		return
	}
	active := map[string]bool{}
	var running []string
	for _, l := range loaded {
		if SurgeActive(l) {
			active[l.Name] = true
			running = append(running, l.Name)
		}
	}
	if len(running) == 0 {
		return
	}
	st, err := sd.Brief(ctx, running)
	if err != nil {
		return
	}
	byName := map[string]UnitStatus{}
	for _, u := range st {
		byName[u.Name] = u
	}
	for _, j := range valid {
		ps := &snap.Projects[j]
		name := units.Instance(ps.Entry.Name, units.Surge)
		if u, ok := byName[name]; ok && active[name] && ps.Statuses != nil {
			ps.IDs = append(ps.IDs, units.Surge)
			ps.Statuses = append(ps.Statuses, u)
		}
	}
}

// readProbes fills in the Probes of the cluster-mode projects that have
// an online instance whose run the journal holds no verdict on: only
// those need to know whether a probe still waits for it (pending) or
// none does (unprobed).
func readProbes(ctx context.Context, sd Units, snap *Snapshot, valid []int) {
	var want []int
	var names []string
	for _, j := range valid {
		ps := &snap.Projects[j]
		p := ps.Entry.Project
		if p.Mode != config.Cluster || ps.Statuses == nil {
			continue
		}
		pending := false
		for k, i := range ps.IDs {
			u := ps.Statuses[k]
			if st, _ := InstanceState(u); st != StateOnline {
				continue
			}
			if v, _ := ReuseportVerdict(u, units.InstanceID(p.Name, i), snap.Events); v == "" {
				pending = true
			}
		}
		if !pending {
			continue
		}
		want = append(want, j)
		for _, i := range ps.IDs {
			names = append(names, units.Probe(p.Name, i))
		}
	}
	if len(names) == 0 {
		return
	}
	pr, err := sd.Brief(ctx, names)
	if err != nil {
		return
	}
	off := 0
	for _, j := range want {
		n := len(snap.Projects[j].IDs)
		snap.Projects[j].Probes = pr[off : off+n : off+n]
		off += n
	}
}

// readMarks reads a project's errored mark, and its instances' own.
func readMarks(h Host, ps *ProjectSnapshot) {
	p := ps.Entry.Project
	mark, errored, err := h.ErroredMark(p.Name)
	if err != nil {
		ps.Warning = fmt.Sprintf("%s: read errored state: %v", p.Name, err)
	}
	ps.Errored, ps.Mark = errored, mark
	if errored {
		return
	}
	ps.Marks = map[int]state.Mark{}
	for k, i := range ps.IDs {
		var m state.Mark
		var ok bool
		if ps.Statuses != nil {
			m, ok = h.MarkOf(p, i, ps.Statuses[k])
		} else {
			m, ok = h.InstanceMark(units.InstanceID(p.Name, i))
		}
		if ok {
			ps.Marks[k] = m
		}
	}
}

// readHealth reads the state file of a project's health check: root's,
// 0644, so any user's bm2 list reads it. Before the first check there
// is none, which is not a problem.
func readHealth(h Host, ps *ProjectSnapshot) {
	p := ps.Entry.Project
	if !p.HealthChecked() {
		return
	}
	st, err := health.Read(health.Path(h.HealthDir(p.Name)))
	switch {
	case err == nil:
		ps.Health = &st
	case !health.IsMissing(err) && ps.Warning == "":
		ps.Warning = fmt.Sprintf("%s: read the health checks' state: %v", p.Name, err)
	}
}

// unaccounted tells whether a running instance lacks a memory or CPU
// figure.
func unaccounted(projects []ProjectSnapshot) bool {
	for _, ps := range projects {
		for _, u := range ps.Statuses {
			if u.MainPID != 0 && (u.MemoryCurrent == Unknown || u.CPUUsageNSec == Unknown) {
				return true
			}
		}
	}
	return false
}

// InstanceView is what bm2 list, bm2 status and bm2 top say of one
// instance of a Snapshot: its state word and reason, who holds its port,
// its reusePort verdict. [Snapshot.Instance] is the one place these are
// decided, so that the table and the live view cannot disagree.
type InstanceView struct {
	// State is one of the State words, Reason why (a reason of package
	// reason, a unit's result, or "surge of a reload").
	State, Reason string
	// Holder is who holds the port of an instance errored as
	// port_in_use (its mark, written by the exit hook).
	Holder string
	// Verdict is the reusePort probe's verdict on the current run of a
	// cluster-mode instance that is online (VerdictPending while there
	// is none yet), or VerdictMissing for a project the probe stopped;
	// "" when none is claimed: fork mode, not online, the journal unread.
	Verdict string
	// Status is the instance's unit as systemd told it; nil when
	// systemd did not say (see ProjectSnapshot.Statuses).
	Status *UnitStatus
	// Health is the health check's word for the current run of an
	// online instance of a project with health_path (HealthWords: see
	// HealthOf); "" when none is claimed: no check, not online, systemd
	// did not say. HealthEntry is the state file's entry it comes from,
	// nil when there is none for this run.
	Health      string
	HealthEntry *health.Entry
}

// The health check's words for one run of an instance, as bm2 list and
// bm2 top show them (the state file's, and the two it cannot say).
const (
	HealthHealthy   = string(health.Healthy)
	HealthStarting  = string(health.Starting)
	HealthUnhealthy = string(health.Unhealthy)
	// HealthPending: the run has not been checked yet.
	HealthPending = "pending"
	// HealthStale: its last check is older than the check's interval
	// allows (the timer stopped, or its runs fail: `systemctl status
	// bm2-<name>-health.service`).
	HealthStale = "stale"
)

// HealthWords are the words of InstanceView.Health, in the order of
// bm2(1).
var HealthWords = []string{HealthHealthy, HealthStarting, HealthUnhealthy, HealthPending, HealthStale}

// healthStaleAfter is how old a check may be before its word is stale:
// two intervals and the timeout, with room for a busy host.
func healthStaleAfter(p *config.Project) time.Duration {
	return 2*p.Health.Interval + p.Health.Timeout + 10*time.Second
}

// HealthCell is the HEALTH cell of bm2 list and bm2 top: the word, with
// the count of an unhealthy run ("unhealthy 2/3"); failures and limit
// nil when not known.
func HealthCell(word string, failures, limit *int) string {
	if word == HealthUnhealthy && failures != nil && limit != nil && *failures > 0 {
		return fmt.Sprintf("%s %d/%d", word, *failures, *limit)
	}
	return word
}

// HealthOf is the health check's word for run u of instance id of p,
// from the state file st (nil: none yet) at now, and the entry it comes
// from.
func HealthOf(p *config.Project, id string, u UnitStatus, st *health.State, now time.Time) (string, *health.Entry) {
	if !p.HealthChecked() || !Up(u) {
		return "", nil
	}
	if st == nil {
		return HealthPending, nil
	}
	e, ok := st.Of(id, u.InvocationID)
	switch {
	case !ok:
		return HealthPending, nil
	case now.Sub(e.Checked) > healthStaleAfter(p):
		return HealthStale, &e
	}
	return string(e.Status), &e
}

// Instance is the view of the k-th instance (ProjectSnapshot.IDs[k]) of
// the p-th project of s, a valid one (Entry.Project set, Entry.Err nil).
// It is a pure function of s.
func (s Snapshot) Instance(p, k int) InstanceView {
	ps := s.Projects[p]
	proj, i := ps.Entry.Project, ps.IDs[k]
	v := InstanceView{State: StateUnknown}
	if ps.Statuses != nil {
		u := ps.Statuses[k]
		v.Status = &u
		v.State, v.Reason = ProjectInstanceState(u, proj.MaxRestarts)
		if i == units.Surge && v.Reason == "" {
			v.Reason = "surge of a reload"
		}
		if proj.Mode == config.Cluster && v.State == StateOnline && s.EventsRead {
			verdict, _ := ReuseportVerdict(u, units.InstanceID(proj.Name, i), s.Events)
			if verdict == "" {
				verdict = VerdictPending
				if k < len(ps.Probes) && ProbeLost(u, ps.Probes[k], s.Now) {
					verdict = VerdictUnprobed
				}
			}
			v.Verdict = verdict
		}
	}
	if v.Status != nil && v.State == StateOnline {
		v.Health, v.HealthEntry = HealthOf(proj, units.InstanceID(proj.Name, i), *v.Status, ps.Health, s.Now)
	}
	if m, ok := ps.Marks[k]; ok {
		v.State, v.Reason, v.Holder = StateErrored, m.Reason, m.Detail
		v.Health, v.HealthEntry = "", nil
	}
	if ps.Errored {
		v.Health, v.HealthEntry = "", nil
		v.State, v.Reason = StateErrored, ps.Mark
		if v.Reason == "" {
			v.Reason = "errored"
		}
		if ps.Mark == string(reason.ReuseportMissing) || ps.Mark == string(reason.LoopbackOnly) {
			v.Verdict = VerdictMissing
		}
	}
	return v
}

// InvalidReason is why a project file is invalid, on one line and without
// the file's name (bm2 list's and bm2 top's row names the project): its
// errors as "line 3: prot: unknown key", joined by "; ".
func InvalidReason(e config.Entry) string {
	var es config.Errors
	var one *config.Error
	switch {
	case errors.As(e.Err, &es):
	case errors.As(e.Err, &one):
		es = config.Errors{one}
	default:
		return strings.TrimPrefix(wording.OneLine(e.Err), e.Path+": ")
	}
	parts := make([]string, len(es))
	for i, ce := range es {
		var b strings.Builder
		if ce.Line > 0 {
			fmt.Fprintf(&b, "line %d: ", ce.Line)
		}
		if ce.Key != "" {
			b.WriteString(ce.Key + ": ")
		}
		b.WriteString(ce.Msg)
		parts[i] = b.String()
	}
	return strings.Join(parts, "; ")
}
