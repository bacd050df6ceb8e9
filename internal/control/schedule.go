package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/units"
)

// ErrNoAnalyze is Env.Calendar's answer on a host without systemd-analyze.
var ErrNoAnalyze = errors.New("no systemd-analyze")

// CalendarRefused is systemd-analyze's refusal of a calendar expression
// that config's subset took: a bug of bm2's, said as such.
type CalendarRefused struct {
	Expr string
	Msg  string // what systemd-analyze said
}

func (e *CalendarRefused) Error() string {
	return fmt.Sprintf("systemd-analyze calendar refuses %q: %s", e.Expr, e.Msg)
}

// NeverNext is what systemd-analyze calendar says of an expression that
// never comes (again): "2020-01-01", "*-02-30".
const NeverNext = "never"

// analyzeCalendar is Env.Calendar's default: the next elapse of expr as
// `systemd-analyze calendar --iterations=1` says it ("Sun 2026-12-06
// 04:00:00 UTC", in the local time zone, or "never").
func analyzeCalendar(ctx context.Context, expr string) (string, error) {
	path, err := exec.LookPath("systemd-analyze")
	if err != nil {
		return "", ErrNoAnalyze
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "calendar", "--iterations=1", expr)
	cmd.Env = append(os.Environ(), "SYSTEMD_COLORS=0", "SYSTEMD_PAGER=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = ee.Error()
		}
		return "", &CalendarRefused{Expr: expr, Msg: msg}
	}
	if err != nil {
		return "", fmt.Errorf("systemd-analyze calendar: %w", err)
	}
	return nextElapse(out)
}

// nextElapse reads the "Next elapse:" line of systemd-analyze calendar.
func nextElapse(out []byte) (string, error) {
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Next elapse:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("systemd-analyze calendar: no next elapse in its output")
}

// stopStaleTimer stops the restart timer of a project that has no
// restart_schedule (any more), and the health timer of one that has no
// health_path: systemd keeps a running unit whose file the generator no
// longer writes, and it would go on starting a reload, or a check, that
// is not there.
func (c *Client) stopStaleTimer(ctx context.Context, sd Systemd, p *config.Project) error {
	var stale []string
	why := map[string]string{}
	if p.RestartSchedule == "" {
		stale = append(stale, units.RestartTimer(p.Name))
		why[units.RestartTimer(p.Name)] = "restart_schedule"
	}
	if !p.HealthChecked() {
		stale = append(stale, units.HealthTimer(p.Name))
		why[units.HealthTimer(p.Name)] = "health_path"
	}
	if !p.MemoryWatched() {
		stale = append(stale, units.MemoryTimer(p.Name))
		why[units.MemoryTimer(p.Name)] = "memory_restart"
	}
	if len(stale) == 0 {
		return nil
	}
	loaded, err := sd.Loaded(ctx, stale)
	if err != nil {
		return err
	}
	for _, timer := range stale {
		for _, u := range loaded {
			if u.Name != timer || u.Down() {
				continue
			}
			if err := sd.Stop(ctx, timer); err != nil {
				return err
			}
			c.say("stopped %s: %s has no %s any more", timer, p.Name, why[timer])
		}
	}
	return nil
}

// ExitText says how a unit's last run ended: "exit-code, exit status 1",
// "signal, signal SIGKILL", "timeout"; "" when it ended well.
func ExitText(u view.UnitStatus) string {
	if u.Result == "" || u.Result == "success" {
		return wait.ExitText(u, "")
	}
	return wait.ExitText(u, u.Result)
}
