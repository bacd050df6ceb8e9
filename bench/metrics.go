package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// metricsProjects is how many projects the scrape figure registers, one
// running instance each.
const metricsProjects = 100

// metricsBasePort is the first of their ports (cluster mode, one each).
const metricsBasePort = 21000

// metricsUp registers the projects (files in /etc/bm2, as bm2 serve
// writes them), starts them all and waits until they are online and
// probed.
var metricsUp = fmt.Sprintf(`set -e
for i in $(seq 0 %[1]d); do
	printf -v name 'mt%%03d' "$i"
	printf 'name = "%%s"\nscript = "app.js"\ncwd = "/srv/bench"\nruntime = "node"\ninstances = 1\nport = %%d\n' "$name" $((%[2]d + i)) > /etc/bm2/$name.toml
done
systemctl daemon-reload
systemctl start $(for i in $(seq 0 %[1]d); do printf 'bm2-mt%%03d.target ' "$i"; done)
(for i in $(seq 600); do n=$(systemctl list-units --no-legend --plain --state=running 'bm2@mt*' | wc -l); test "$n" -ge %[3]d && exit 0; sleep 0.1; done; exit 1)
%[4]s
systemctl enable --now bm2-metrics.socket >/dev/null 2>&1`, metricsProjects-1, metricsBasePort, metricsProjects, probesDone)

// metricsDown stops and unregisters them.
const metricsDown = `systemctl disable --now bm2-metrics.socket >/dev/null 2>&1; systemctl stop 'bm2-mt*.target' 'bm2@mt*' >/dev/null 2>&1; rm -f /etc/bm2/mt[0-9]*.toml; systemctl daemon-reload`

// metricsTimed runs one scrape three ways and prints "M <what> <wall ms>
// <user ms> <sys ms>" for each: bm2 metrics; the socket service's
// command with a request on stdin (the scrape's own work, without
// systemd's spawn); and curl through bm2-metrics.socket (wall only, the
// CPU is the service's). bm2 list of the same projects is timed beside
// them: it reads the same snapshot, without the kernel's figures.
const metricsTimed = `set -e
TIMEFORMAT='%3R %3U %3S'
t() { { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{printf "%.1f %.1f %.1f\n", $1*1000, $2*1000, $3*1000}'; }
echo "M cli $(t bm2 metrics)"
echo "M list $(t bm2 list)"
echo "M http $(t sh -c 'printf "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" | bm2 --system metrics --http')"
echo "M socket $(curl -sf -o /dev/null -w '%{time_total}' http://127.0.0.1:9615/metrics | awk '{printf "%.1f", $1*1000}') 0 0"
test "$(bm2 metrics | grep -c '^bm2_instance_up{')" -ge ` + "100"

// metrics times one scrape of 100 running projects.
func (r *runner) metrics(ctx context.Context) error {
	r.record("metrics", metricsUp+"   # before (not timed)", metricsTimed, metricsDown+"   # afterwards")
	if out, err := r.bm2.sh(ctx, metricsUp); err != nil {
		return fmt.Errorf("start %d projects: %w\n%s", metricsProjects, err, out)
	}
	defer r.bm2.sh(context.WithoutCancel(ctx), metricsDown)
	names := map[string]string{
		"cli":    "bm2 metrics",
		"list":   "bm2 list (the same projects' table)",
		"http":   "bm2 metrics --http (one exchange, a request on stdin)",
		"socket": "curl through bm2-metrics.socket",
	}
	reps := r.s.ProbeReps * 2
	for rep := range reps {
		out, err := r.bm2.sh(ctx, metricsTimed)
		if err != nil {
			return fmt.Errorf("scrape: %w\n%s", err, out)
		}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) != 5 || f[0] != "M" {
				continue
			}
			var v [3]float64
			for k := range v {
				if v[k], err = strconv.ParseFloat(f[2+k], 64); err != nil {
					return fmt.Errorf("scrape timing %q: %w", l, err)
				}
			}
			r.sample("metrics", names[f[1]], "wall (ms)", rep, v[0])
			if f[1] != "socket" {
				r.sample("metrics", names[f[1]], "CPU, user + system (ms)", rep, v[1]+v[2])
			}
			r.logf("metrics %d/%d %-12s %6.1f ms wall, %6.1f ms CPU", rep+1, reps, f[1], v[0], v[1]+v[2])
		}
	}
	return nil
}
