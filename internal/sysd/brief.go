package sysd

import (
	"context"
	"errors"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
)

// errShortList is a ListUnitsByNames answer that is not one unit per
// name asked, in order.
var errShortList = errors.New("systemd's answer does not match the units asked for")

// briefProps are the properties [Conn.Brief] reads of a loaded unit in
// a given ActiveState, past the states ListUnitsByNames gives, on the
// Unit and (services) the Service interface: what bm2 list, bm2 top and
// bm2 metrics show, and what decides an instance's state, its reusePort
// verdict and its figures. A run's figures are asked only of a unit that
// has one, and how a run ended only of one that is not up.
func briefProps(activeState string, service bool) (unit, svc []string) {
	up := activeState == "active" || activeState == "reloading"
	unit = []string{"ActiveEnterTimestamp", "InvocationID"}
	if !up {
		unit = append(unit, "InactiveEnterTimestamp")
	}
	if !service {
		return unit, nil
	}
	svc = []string{"NRestarts"}
	if activeState != "inactive" && activeState != "failed" {
		svc = append(svc, "MainPID", "ExecMainStartTimestamp", "ControlGroup", "MemoryCurrent", "CPUUsageNSec", "TasksCurrent")
	}
	if !up {
		svc = append(svc, "Result", "ExecMainCode", "ExecMainStatus")
	}
	return unit, svc
}

// briefRead tells whether Brief reads a unit's properties: a loaded
// one, and one that runs though its file is gone or masked (systemd
// keeps such a unit, not-found or masked, until it stops); a unit that
// is neither has nothing to say past its state.
func briefRead(loadState, activeState string) bool {
	return loadState == "loaded" || activeState != "inactive" && activeState != ""
}

// briefInFlight is how many units Brief reads at once: each read is a
// row of small calls, answered in turn, so more of them are in flight
// than in Units.
const briefInFlight = 24

// Brief reports the state of each named unit, in the order given, as
// [Conn.Units] does but with only part of a Status filled in: the states
// and job (LoadState, ActiveState, SubState, JobID, JobPending),
// ActiveEnter and InvocationID; InactiveEnter of a unit that is not up;
// for services NRestarts, the run (MainPID, ExecMainStart, ControlGroup,
// MemoryCurrent, CPUUsageNSec, TasksCurrent) of one that has a run, and
// how the last one ended (Result, ExecMainCode, ExecMainStatus) of one
// that is not up. The rest is left zero, or Unknown ([BriefOf]).
//
// It is what a scrape of every instance asks for. One ListUnitsByNames
// call gives every unit's state; then each loaded unit's few properties
// are read one Get each, where Units reads two GetAll answers of some
// 300 properties a service, most of which nobody shows: decoding those
// was most of a scrape's CPU time.
func (c *Conn) Brief(ctx context.Context, names []string) ([]Status, error) {
	out := make([]Status, len(names))
	if len(names) == 0 {
		return out, nil
	}
	var list []sddbus.UnitStatus
	err := c.call(ctx, "list units", func(m manager) (err error) {
		list, err = m.ListUnitsByNamesContext(ctx, names)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(list) != len(names) {
		return nil, mapErr("list units", errShortList)
	}
	var todo []int
	for k, u := range list {
		out[k] = Status{Name: names[k], LoadState: u.LoadState, ActiveState: u.ActiveState, SubState: u.SubState,
			JobID: u.JobId, JobPending: u.JobId != 0,
			MemoryCurrent: Unknown, CPUUsageNSec: Unknown, TasksCurrent: Unknown, UID: NoID, GID: NoID}
		if u.Name != names[k] {
			return nil, mapErr("list units", errShortList)
		}
		if briefRead(u.LoadState, u.ActiveState) {
			todo = append(todo, k)
		}
	}
	err = each(ctx, len(todo), briefInFlight, func(ctx context.Context, n int) error {
		return c.brief(ctx, &out[todo[n]])
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// brief reads the Brief properties of one unit into s. The reads are one
// Get each, not one answer: a restart between them would mix two runs
// (one's InvocationID, the next one's start), so the InvocationID is
// read again last, and the unit again whole while it changed (three
// times at most: then it restarts faster than it can be read, and the
// last read stands).
func (c *Conn) brief(ctx context.Context, s *Status) error {
	base := *s
	return c.call(ctx, "read the state of "+s.Name, func(m manager) error {
		for range 3 {
			*s = base
			again, err := c.briefOnce(ctx, m, s)
			if err != nil || !again {
				return err
			}
		}
		return nil
	})
}

// briefOnce reads the Brief properties of one unit into s once, and
// tells whether its InvocationID changed meanwhile.
func (c *Conn) briefOnce(ctx context.Context, m manager, s *Status) (bool, error) {
	unitProps, svcProps := briefProps(s.ActiveState, IsService(s.Name))
	props := make(map[string]any, len(unitProps)+3)
	for _, p := range unitProps {
		v, err := m.GetUnitPropertyContext(ctx, s.Name, p)
		if err != nil {
			return false, err
		}
		props[p] = v.Value.Value()
	}
	props["LoadState"], props["ActiveState"], props["SubState"] = s.LoadState, s.ActiveState, s.SubState
	job := s.JobID
	s.fill(props)
	s.JobID, s.JobPending = job, job != 0
	if svcProps == nil {
		return false, nil
	}
	sp := make(map[string]any, len(svcProps))
	for _, p := range svcProps {
		v, err := m.GetServicePropertyContext(ctx, s.Name, p)
		if err != nil {
			return false, err
		}
		sp[p] = v.Value.Value()
	}
	s.fillService(sp)
	v, err := m.GetUnitPropertyContext(ctx, s.Name, "InvocationID")
	if err != nil {
		return false, err
	}
	return invocation(v.Value.Value()) != s.InvocationID, nil
}

// BriefOf keeps of s what [Conn.Brief] fills in for a unit in s's
// state, and zeroes the rest: a fake of Brief answers with it, so that a
// test sees what a reader of Brief's answer would miss.
func BriefOf(s Status) Status {
	b := Status{
		Name: s.Name, LoadState: s.LoadState, ActiveState: s.ActiveState, SubState: s.SubState, JobID: s.JobID, JobPending: s.JobPending,
		MemoryCurrent: Unknown, CPUUsageNSec: Unknown, TasksCurrent: Unknown, UID: NoID, GID: NoID,
	}
	if !briefRead(s.LoadState, s.ActiveState) {
		return b
	}
	unit, svc := briefProps(s.ActiveState, IsService(s.Name))
	for _, p := range append(unit, svc...) {
		switch p {
		case "ActiveEnterTimestamp":
			b.ActiveEnter = s.ActiveEnter
		case "InvocationID":
			b.InvocationID = s.InvocationID
		case "InactiveEnterTimestamp":
			b.InactiveEnter = s.InactiveEnter
		case "NRestarts":
			b.NRestarts = s.NRestarts
		case "MainPID":
			b.MainPID = s.MainPID
		case "ExecMainStartTimestamp":
			b.ExecMainStart = s.ExecMainStart
		case "ControlGroup":
			b.ControlGroup = s.ControlGroup
		case "MemoryCurrent":
			b.MemoryCurrent = s.MemoryCurrent
		case "CPUUsageNSec":
			b.CPUUsageNSec = s.CPUUsageNSec
		case "TasksCurrent":
			b.TasksCurrent = s.TasksCurrent
		case "Result":
			b.Result = s.Result
		case "ExecMainCode":
			b.ExecMainCode = s.ExecMainCode
		case "ExecMainStatus":
			b.ExecMainStatus = s.ExecMainStatus
		}
	}
	return b
}
