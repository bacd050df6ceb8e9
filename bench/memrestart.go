package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memIntervals are the memory_check_interval_ms timed: the default, and
// the least.
var memIntervals = []int{5000, 1000}

// memLimit is memory_restart of the project timed, 160 MiB; memory_max
// (600M) leaves the reload room at 20 MB/s with the default interval.
const memLimit = 160 << 20

// memUp registers and serves project bmr (2 instances, cluster mode,
// e2e/apps/leak-server.js) with the given interval.
func memUp(interval int) string {
	return fmt.Sprintf(`set -e
rm -f /srv/bmr/grow-1
printf 'name = "bmr"\nscript = "server.js"\nruntime = "node"\ninstances = 2\nport = 3710\nmemory_restart = "160M"\nmemory_check_interval_ms = %d\nstop_timeout_ms = 3000\n\n[resources]\nmemory_max = "600M"\n' > /srv/bmr/bm2.toml
cd /srv/bmr && bm2 serve >/dev/null`, interval)
}

// memTimed makes instance 1 keep 20 MB more a second and prints "D <ms>":
// from the moment its cgroup's memory (systemd's MemoryCurrent, polled
// every 20 ms) is above the limit to the memory_restart event's time in
// the journal; "R <ms>": from then to its new run (a new InvocationID,
// running, confirmed); then "C <ms>": one check while every instance is
// below the limit, `systemctl start` of the memory service.
//
// The growth starts at a random point of the timer's interval (a sleep of
// 0 to one interval first, not timed): the time to the event depends on
// where in it the limit is crossed. The check's cost is timed only with
// the default interval: with 1000 ms the timer's own runs meet the one
// started by hand, whose start job then waits for theirs.
func memTimed(interval int) string {
	check := ""
	if interval == memIntervals[0] {
		check = `
t1=$(date +%s%N)
systemctl start bm2-bmr-memory.service
echo "C $(( ($(date +%s%N) - t1) / 1000000 ))"`
	}
	return `set -e
inv=$(systemctl show -P InvocationID bm2@bmr-1.service)
sleep $(awk -v s=$RANDOM -v i=` + strconv.Itoa(interval) + ` 'BEGIN { srand(s); printf "%.3f", rand() * i / 1000 }')
touch /srv/bmr/grow-1
t=$(date +%s%N)
while m=$(systemctl show -P MemoryCurrent bm2@bmr-1.service); test "$m" -le ` + strconv.Itoa(memLimit) + `; do
	test $(( ($(date +%s%N) - t) / 1000000 )) -lt 60000 || { echo "not above the limit in 60 s"; exit 1; }
	sleep 0.02
done
t0=$(date +%s%N)
while test "$(systemctl show -P InvocationID bm2@bmr-1.service)" = "$inv" || test "$(systemctl show -P SubState bm2@bmr-1.service)" != running; do
	test $(( ($(date +%s%N) - t0) / 1000000 )) -lt 60000 || { echo "not restarted in 60 s"; exit 1; }
	sleep 0.02
done
rm -f /srv/bmr/grow-1
ev=$(journalctl -t bm2 BM2_EVENT=memory_restart BM2_INVOCATION="$inv" -o export | sed -n 's/^__REALTIME_TIMESTAMP=//p' | head -1)
test -n "$ev" || { echo "no memory_restart event"; journalctl -n 30 --no-pager; exit 1; }
echo "D $(( (ev * 1000 - t0) / 1000000 ))"
echo "R $(( ($(date +%s%N) - t0) / 1000000 ))"
for i in $(seq 300); do bm2 list --json bmr | grep -c '"state": "online"' | grep -qx 2 && test "$(systemctl show -P ActiveState bm2-bmr-reload@1.service)" = inactive && break; sleep 0.1; done` + check
}

// memDown unregisters the project.
const memDown = `cd / && bm2 delete bmr >/dev/null 2>&1; rm -rf /srv/bmr`

// memRestart times how long the memory restart takes to find an instance
// above memory_restart and reload it, and what one check costs.
func (r *runner) memRestart(ctx context.Context) error {
	app, err := os.ReadFile(filepath.Join(r.repo, "e2e/apps/leak-server.js"))
	if err != nil {
		return err
	}
	if out, err := r.bm2.sh(ctx, "install -d -m 0755 /srv/bmr"); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	if err := r.bm2.WriteFile("/srv/bmr/server.js", app, 0o644); err != nil {
		return err
	}
	defer r.bm2.sh(context.WithoutCancel(ctx), memDown)
	r.record("memrestart", memUp(5000)+"   # before (not timed), each interval in turn", memTimed(5000), memDown+"   # afterwards")
	checks := 0
	for _, interval := range memIntervals {
		if out, err := r.bm2.sh(ctx, memUp(interval)); err != nil {
			return fmt.Errorf("serve bmr: %w\n%s", err, out)
		}
		variant := fmt.Sprintf("memory_check_interval_ms = %d", interval)
		reps := r.s.ProbeReps
		for rep := range reps {
			out, err := r.bm2.sh(ctx, memTimed(interval))
			if err != nil {
				return fmt.Errorf("grow: %w\n%s", err, out)
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
				case "D":
					r.sample("memrestart", variant, "above the limit to memory_restart (ms)", rep, v)
				case "R":
					r.sample("memrestart", variant, "above the limit to the new run (ms)", rep, v)
					r.logf("memrestart %d/%d %s: new run %.0f ms after the limit", rep+1, reps, variant, v)
				case "C":
					r.sample("memrestart", "one check of 2 instances, both below (systemctl start of the memory service)", "wall (ms)", checks, v)
					checks++
				}
			}
		}
	}
	return nil
}
