package view

import (
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
)

// The HEALTH word of a run: the state file's entry for that very run,
// pending without one, stale when the checks stopped, nothing without a
// check or for an instance that is not up.
func TestHealthOf(t *testing.T) {
	now := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	p := &config.Project{Name: "api", Health: config.Health{Path: "/h", Interval: 5 * time.Second, Timeout: 2 * time.Second, Failures: 3}}
	u := UnitStatus{ActiveState: "active", SubState: "running", MainPID: 7, InvocationID: "run1", ActiveEnter: now.Add(-time.Minute)}
	st := &health.State{Instances: []health.Entry{
		{Instance: "api-0", Invocation: "run1", Status: health.Unhealthy, Failures: 1, Limit: 3, Checked: now.Add(-3 * time.Second)},
		{Instance: "api-1", Invocation: "run0", Status: health.Healthy, Checked: now},
	}}
	for _, c := range []struct {
		name string
		p    *config.Project
		id   string
		u    UnitStatus
		st   *health.State
		now  time.Time
		want string
	}{
		{"checked", p, "api-0", u, st, now, HealthUnhealthy},
		{"an earlier run's entry", p, "api-1", u, st, now, HealthPending},
		{"no state file yet", p, "api-0", u, nil, now, HealthPending},
		{"checks stopped", p, "api-0", u, st, now.Add(time.Minute), HealthStale},
		{"no health check", &config.Project{Name: "api"}, "api-0", u, st, now, ""},
		{"not up", p, "api-0", UnitStatus{ActiveState: "activating", SubState: "auto-restart", InvocationID: "run1"}, st, now, ""},
	} {
		got, e := HealthOf(c.p, c.id, c.u, c.st, c.now)
		if got != c.want || (got == HealthUnhealthy && (e == nil || e.Failures != 1)) {
			t.Errorf("%s: %q %+v, want %q", c.name, got, e, c.want)
		}
	}
	f, l := 2, 3
	if HealthCell(HealthUnhealthy, &f, &l) != "unhealthy 2/3" || HealthCell(HealthHealthy, nil, nil) != "healthy" {
		t.Error(HealthCell(HealthUnhealthy, &f, &l))
	}
}
