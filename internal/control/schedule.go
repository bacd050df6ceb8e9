package control

import (
	"context"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/units"
)

// stopStaleTimer stops the restart timer of a project that has no
// restart_schedule (any more), and the health timer of one that has no
// health_path: systemd keeps a running unit whose file the generator no
// longer writes, and it would go on starting a reload, or a check, that
// is not there. r hears what is stopped.
func stopStaleTimer(ctx context.Context, sd Systemd, r Reporter, p *config.Project) error {
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
			say(r, "stopped %s: %s has no %s any more", timer, p.Name, why[timer])
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
