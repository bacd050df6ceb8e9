package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/analyze"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/view"
)

// schedAPI is the seed's api with a restart schedule.
var schedAPI = strings.Replace(seedAPI, "port = 3000\n", "port = 3000\nrestart_schedule = \"Sun 04:00\"\n", 1)

const (
	apiTimer   = "bm2-api-restart.timer"
	apiService = "bm2-api-restart.service"
)

// servedScheduled is served with schedAPI, its timer due at next.
func servedScheduled(t *testing.T, next time.Time) *testEnv {
	te := newTestEnv(t)
	te.sd.next[apiTimer] = next
	dir := filepath.Dir(te.write("srv/api/bm2.toml", schedAPI))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.Calls()
	return te
}

func statusLine(te *testEnv, prefix string) string {
	for _, line := range strings.Split(te.stdout.String(), "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// bm2 status says when the restart timer runs next, as systemd has it
// (NextElapseUSecRealtime), and what became of it when the project
// stops; a project without the key has no such line.
func TestStatusRestartSchedule(t *testing.T) {
	next := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	te := servedScheduled(t, next)
	te.mustRun(ExitOK, "status", "api")
	want := "  restart schedule: Sun 04:00, next " + next.Local().Format("2006-01-02 15:04:05 MST") + " (bm2-api-restart.timer)"
	if got := statusLine(te, "  restart schedule:"); got != want {
		t.Fatalf("status line %q, want %q\n%s", got, want, te.stdout.String())
	}
	if time.Local == time.UTC && want != "  restart schedule: Sun 04:00, next 2026-12-06 04:00:00 UTC (bm2-api-restart.timer)" {
		t.Fatal(want)
	}

	// The timer is PartOf= the target: stopped with the project.
	te.mustRun(ExitOK, "stop", "api")
	te.mustRun(ExitOK, "status", "api")
	if got := statusLine(te, "  restart schedule:"); got != "  restart schedule: Sun 04:00, timer inactive: it runs while bm2-api.target is active (`bm2 start api`) (bm2-api-restart.timer)" {
		t.Fatalf("stopped: %q", got)
	}
	te.mustRun(ExitOK, "start", "api")

	// A scheduled reload that failed says how, when, and where to look.
	failedAt := time.Date(2026, 11, 29, 4, 0, 3, 0, time.UTC)
	te.sd.set(UnitStatus{Name: apiService, ActiveState: "failed", SubState: "failed", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 1,
		InactiveEnter: failedAt, MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	te.mustRun(ExitOK, "status", "api")
	want = "  the last scheduled reload failed (exit-code, exit status 1) at " + failedAt.Local().Format("2006-01-02 15:04:05 MST") +
		": `journalctl -u bm2-api-restart.service` says why"
	if got := statusLine(te, "  the last scheduled reload"); got != want {
		t.Fatalf("failed: %q, want %q\n%s", got, want, te.stdout.String())
	}
	if got := statusLine(te, "  restart schedule:"); !strings.Contains(got, ", next ") {
		t.Fatalf("started again: %q", got)
	}

	// Without systemd the schedule is still shown.
	te.noSD = true
	te.mustRun(ExitOK, "status", "api")
	if got := statusLine(te, "  restart schedule:"); got != "  restart schedule: Sun 04:00, next run unknown (systemd not reachable) (bm2-api-restart.timer)" {
		t.Fatalf("no systemd: %q", got)
	}

	plain := served(t)
	plain.mustRun(ExitOK, "status", "api")
	if strings.Contains(plain.stdout.String(), "restart schedule") {
		t.Fatalf("a project without restart_schedule:\n%s", plain.stdout.String())
	}
}

// The status lines of the other states of the timer and the service.
func TestScheduleLines(t *testing.T) {
	p := &config.Project{Name: "api", RestartSchedule: "daily"}
	timer := func(load, active string) UnitStatus {
		return UnitStatus{Name: apiTimer, LoadState: load, ActiveState: active}
	}
	for _, c := range []struct {
		st   []UnitStatus
		want string
	}{
		{[]UnitStatus{timer("not-found", "inactive"), {Name: apiService, LoadState: "not-found"}},
			"restart schedule: daily, not loaded by systemd yet (`bm2 serve` or daemon-reload loads it) (bm2-api-restart.timer)"},
		{[]UnitStatus{timer("loaded", "active"), {Name: apiService, LoadState: "loaded", ActiveState: "activating"}},
			"restart schedule: daily, next never (the schedule does not come again) (bm2-api-restart.timer)\n" +
				"a scheduled reload is running: `journalctl --user-unit bm2-api-restart.service -f` follows it"},
		{[]UnitStatus{timer("loaded", "failed"), {Name: apiService, LoadState: "loaded", ActiveState: "failed", Result: "timeout"}},
			"restart schedule: daily, timer failed: it runs while bm2-api.target is active (`bm2 start api`) (bm2-api-restart.timer)\n" +
				"the last scheduled reload failed (timeout): `journalctl --user-unit bm2-api-restart.service` says why"},
	} {
		if got := strings.Join(scheduleLines(p, c.st, "journalctl --user-unit"), "\n"); got != c.want {
			t.Errorf("got\n%s\nwant\n%s", got, c.want)
		}
	}
}

// When restart_schedule leaves the file, serve stops the timer systemd
// still runs (its unit file is gone), and says so.
func TestServeStopsTheTimerOfARemovedSchedule(t *testing.T) {
	te := servedScheduled(t, time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC))
	if u := te.sd.units[apiTimer]; u == nil || u.ActiveState != "active" {
		t.Fatalf("timer not started with the target: %+v", u)
	}
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitOK, "serve", dir)
	if !strings.Contains(te.stdout.String(), "stopped bm2-api-restart.timer: api has no restart_schedule any more\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	if u := te.sd.units[apiTimer]; u != nil && u.ActiveState != "inactive" {
		t.Fatalf("timer still %s", u.ActiveState)
	}
	te.mustRun(ExitOK, "serve", dir)
	if strings.Contains(te.stdout.String(), "restart_schedule") {
		t.Fatalf("stopped twice:\n%s", te.stdout.String())
	}
}

// bm2 check shows the next run systemd-analyze calendar computes, and
// finds a problem in a schedule that never comes or that systemd refuses.
func TestCheckRestartSchedule(t *testing.T) {
	for _, c := range []struct {
		name     string
		answer   func(string) (string, error)
		code     int
		line     string
		problems string
	}{
		{"next", func(expr string) (string, error) {
			if expr != "Sun 04:00" {
				return "", errors.New("asked " + expr)
			}
			return "Sun 2026-12-06 04:00:00 UTC", nil
		}, ExitOK, "restart schedule: Sun 04:00, next run Sun 2026-12-06 04:00:00 UTC (`bm2 reload api`, started by bm2-api-restart.timer)", ""},
		{"no analyze", nil, ExitOK, "restart schedule: Sun 04:00, next run not computed (no systemd-analyze) (`bm2 reload api`, started by bm2-api-restart.timer)", ""},
		{"never", func(string) (string, error) { return analyze.Never, nil }, ExitInvalid,
			"restart schedule: Sun 04:00, next run never (`bm2 reload api`, started by bm2-api-restart.timer)",
			`restart_schedule "Sun 04:00" never comes (again): systemd-analyze calendar finds no next run, so the project would never be reloaded; fix the date or remove the key`},
		{"refused", func(expr string) (string, error) {
			return "", &analyze.CalendarRefused{Expr: expr, Msg: "Failed to parse calendar specification 'Sun 04:00': Invalid argument"}
		}, ExitInvalid,
			"restart schedule: Sun 04:00: systemd-analyze calendar refuses it (Failed to parse calendar specification 'Sun 04:00': Invalid argument)",
			`restart_schedule "Sun 04:00": systemd-analyze calendar refuses "Sun 04:00": Failed to parse calendar specification 'Sun 04:00': Invalid argument, though bm2 took it`},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := newTestEnv(t)
			te.calendar = c.answer
			dir := filepath.Dir(te.write("srv/api/bm2.toml", schedAPI))
			te.mustRun(c.code, "check", dir)
			if got := statusLine(te, "restart schedule:"); got != c.line {
				t.Errorf("line %q\nwant %q\n%s", got, c.line, te.stdout.String())
			}
			if c.problems != "" && !strings.Contains(te.stderr.String(), c.problems) {
				t.Errorf("stderr lacks %q:\n%s", c.problems, te.stderr.String())
			}
		})
	}
}

// bm2 delete stops the restart timer and a scheduled reload that runs
// before it stops the project, and leaves neither unit failed behind.
func TestDeleteStopsTheScheduledReload(t *testing.T) {
	te := servedScheduled(t, time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC))
	te.sd.set(UnitStatus{Name: apiService, ActiveState: "activating", SubState: "start", MainPID: 4242,
		MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	te.mustRun(ExitOK, "delete", "api")
	calls := strings.Join(te.sd.Calls(), "\n")
	if !strings.Contains(calls, "stop bm2-api-restart.timer\nstop bm2-api-restart.service\nstop bm2-api.target\n") {
		t.Fatalf("calls:\n%s", calls)
	}
	for _, n := range []string{apiService, apiTimer} {
		if !strings.Contains(calls, "reset-failed "+n+"\n") {
			t.Errorf("%s not reset:\n%s", n, calls)
		}
		if u := te.sd.units[n]; u != nil && u.ActiveState != "inactive" {
			t.Errorf("%s still %s", n, u.ActiveState)
		}
	}
}
