package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// healthConfigs are the health checks timed: docs/health.md's example
// figures, and a tighter one.
var healthConfigs = []struct {
	interval, timeout, failures int // ms, ms, count
}{{1000, 500, 3}, {500, 250, 2}}

// healthUp registers and serves project bhc (2 instances, cluster mode,
// e2e/apps/health-server.js) with the given check, and waits until both
// instances answer healthy (serve does).
func healthUp(interval, timeout, failures int) string {
	return fmt.Sprintf(`set -e
printf 'name = "bhc"\nscript = "server.js"\nruntime = "node"\ninstances = 2\nport = 3700\nhealth_path = "/healthz"\nhealth_interval_ms = %d\nhealth_timeout_ms = %d\nhealth_failures = %d\nhealth_port = 3800\n' > /srv/bhc/bm2.toml
cd /srv/bhc && bm2 serve >/dev/null`, interval, timeout, failures)
}

// healthTimed hangs instance 1 (its event loop blocks forever, its ports
// stay open) and prints "H <ms>": from the hang to the instance's new run
// (a new InvocationID, running), polled every 20 ms; then "C <ms>": one
// check of both instances, `systemctl start` of the project's health
// service (the spawn included) while both are healthy again.
const healthTimed = `set -e
inv=$(systemctl show -P InvocationID bm2@bhc-1.service)
t0=$(date +%s%N)
curl -sf --max-time 2 http://127.0.0.1:3801/hang >/dev/null
while test "$(systemctl show -P InvocationID bm2@bhc-1.service)" = "$inv" || test "$(systemctl show -P SubState bm2@bhc-1.service)" != running; do
	test $(( ($(date +%s%N) - t0) / 1000000 )) -lt 60000 || { echo "not restarted in 60 s"; exit 1; }
	sleep 0.02
done
echo "H $(( ($(date +%s%N) - t0) / 1000000 ))"
for i in $(seq 300); do bm2 list --json bhc | grep -o '"health": "healthy"' | wc -l | grep -qx 2 && break; sleep 0.1; done
t1=$(date +%s%N)
systemctl start bm2-bhc-health.service
echo "C $(( ($(date +%s%N) - t1) / 1000000 ))"`

// healthDown unregisters the project.
const healthDown = `cd / && bm2 delete bhc >/dev/null 2>&1; rm -rf /srv/bhc`

// health times how long the health check takes to find a hung event loop
// and restart its instance, and what one check costs.
func (r *runner) health(ctx context.Context) error {
	app, err := os.ReadFile(filepath.Join(r.repo, "e2e/apps/health-server.js"))
	if err != nil {
		return err
	}
	if out, err := r.bm2.sh(ctx, "install -d -m 0755 /srv/bhc"); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	if err := r.bm2.WriteFile("/srv/bhc/server.js", app, 0o644); err != nil {
		return err
	}
	defer r.bm2.sh(context.WithoutCancel(ctx), healthDown)
	r.record("health", healthUp(1000, 500, 3)+"   # before (not timed), each check in turn", healthTimed, healthDown+"   # afterwards")
	checks := 0
	for _, c := range healthConfigs {
		if out, err := r.bm2.sh(ctx, healthUp(c.interval, c.timeout, c.failures)); err != nil {
			return fmt.Errorf("serve bhc: %w\n%s", err, out)
		}
		variant := fmt.Sprintf("health_interval_ms = %d, health_timeout_ms = %d, health_failures = %d", c.interval, c.timeout, c.failures)
		reps := r.s.ProbeReps
		for rep := range reps {
			out, err := r.bm2.sh(ctx, healthTimed)
			if err != nil {
				return fmt.Errorf("hang: %w\n%s", err, out)
			}
			for _, l := range strings.Split(out, "\n") {
				f := strings.Fields(l)
				if len(f) != 2 {
					continue
				}
				v, err := strconv.ParseFloat(f[1], 64)
				if err != nil {
					return fmt.Errorf("timing %q: %w", l, err)
				}
				switch f[0] {
				case "H":
					r.sample("health", variant, "hang to new run (ms)", rep, v)
					r.logf("health %d/%d %s: restarted %.0f ms after the hang", rep+1, reps, variant, v)
				case "C":
					r.sample("health", "one check of 2 instances (systemctl start of the health service)", "wall (ms)", checks, v)
					checks++
				}
			}
		}
	}
	return nil
}
