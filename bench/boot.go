package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// bootSizes are the numbers of instances the boot figure starts at once,
// in projects of 4 (cluster mode, one port each). 4 is one project: what
// a start of 4 instances costs beside its physical limit (section 3
// measures it against PM2).
var bootSizes = []int{4, 20, 80, 200}

// bootBasePort is the first project's port; project k listens on
// bootBasePort+k.
const bootBasePort = 5000

// bootCPU prints the sandbox's CPU time so far (ns): every process in it,
// PID 1 and journald included (the root cgroup of its cgroup namespace).
const bootCPU = `cpu() { if [ -r /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then cat /sys/fs/cgroup/cpuacct/cpuacct.usage; else echo $(( $(sed -n 's/^usage_usec //p' /sys/fs/cgroup/cpu.stat) * 1000 )); fi; }`

// bootListening counts the listeners on the figure's ports.
func bootListening(projects int) string {
	return fmt.Sprintf(`ss -Htln 'sport >= :%d and sport < :%d' | wc -l`, bootBasePort, bootBasePort+projects)
}

// bootUp writes the projects' files (as bm2 serve registers them) and
// runs daemon-reload: nothing started.
func bootUp(projects int) string {
	return fmt.Sprintf(`set -e
for k in $(seq 0 %[1]d); do
	printf 'name = "bt%%d"\nscript = "app.js"\ncwd = "/srv/bench"\nruntime = "node"\nexec_mode = "cluster"\ninstances = 4\nport = %%d\n' "$k" $((%[2]d + k)) > /etc/bm2/bt$k.toml
done
systemctl daemon-reload`, projects-1, bootBasePort)
}

// bootTargets is every project's target.
func bootTargets(projects int) string {
	var t []string
	for k := range projects {
		t = append(t, fmt.Sprintf("bm2-bt%d.target", k))
	}
	return strings.Join(t, " ")
}

// bootTimed starts every project's target at once, as a boot does (no
// job waited for), and polls until every instance listens ("L <ns>"),
// then until every instance's reuseport_confirmed event is in the
// journal ("C <ns>", distinct instances confirmed since the start); "U <ns>" is the sandbox's CPU time from the start
// to that point. Then it stops them (not timed).
func bootTimed(projects int) string {
	want := projects * 4
	return fmt.Sprintf(`set -e
%[1]s
since=@$(date +%%s.%%N | cut -c1-17)
confirmed() { journalctl -q -o cat --since="$since" BM2_EVENT=reuseport_confirmed | grep -o '^bt[0-9]*-[0-9]*' | sort -u | wc -l; }
c0=$(cpu); t0=$(date +%%s%%N); tl=
systemctl start --no-block %[2]s
while :; do
	now=$(date +%%s%%N)
	if [ -z "$tl" ] && [ "$(%[3]s)" -ge %[4]d ]; then tl=$now; fi
	if [ -n "$tl" ]; then
		n=$(confirmed)
		if [ "$n" -ge %[4]d ]; then break; fi
		sleep 0.2
	else
		sleep 0.05
	fi
	test $(( (now - t0) / 1000000 )) -lt 280000 || { echo "not all confirmed in 280 s: $(%[3]s) listening, ${n:-0} confirmed"; exit 1; }
done
t1=$(date +%%s%%N); c1=$(cpu)
echo "L $((tl - t0))"
echo "C $((t1 - t0))"
echo "U $((c1 - c0))"
systemctl stop %[2]s 'bm2@bt*'
%[5]s
(for i in $(seq 300); do test "$(%[3]s)" -eq 0 && exit 0; sleep 0.1; done; exit 1)`, bootCPU, bootTargets(projects), bootListening(projects), want, probesDone)
}

// bootBare starts the same apps as bare processes (root, no unit, no
// sandbox, no probe), all at once, and polls until every one listens;
// "L" and "U" as bootTimed's. Then it kills them.
func bootBare(projects int) string {
	return fmt.Sprintf(`set -e
%[1]s
cd /srv/bench
c0=$(cpu); t0=$(date +%%s%%N)
pids=
for k in $(seq 0 %[2]d); do for i in 0 1 2 3; do
	BM2_APP_PORT=$((%[3]d + k)) BM2_APP_INSTANCE=$i node app.js >/dev/null 2>&1 &
	pids="$pids $!"
done; done
while [ "$(%[4]s)" -lt %[5]d ]; do
	sleep 0.05
	for p in $pids; do kill -0 $p 2>/dev/null || { echo "an app exited before it listened"; kill $pids 2>/dev/null; exit 1; }; done
	test $(( ($(date +%%s%%N) - t0) / 1000000 )) -lt 280000 || { echo "not all listening in 280 s"; kill $pids; exit 1; }
done
t1=$(date +%%s%%N); c1=$(cpu)
echo "L $((t1 - t0))"
echo "U $((c1 - c0))"
kill $pids
wait 2>/dev/null || true
(for i in $(seq 100); do test "$(%[4]s)" -eq 0 && exit 0; sleep 0.1; done; exit 1)`, bootCPU, projects-1, bootBasePort, bootListening(projects), projects*4)
}

// bootUnits writes the same apps as hand-written units with bm2's sandbox
// directives (bench/phases.go's phaseUnit: no hook, no fence, no probe,
// no steering, no wrapper), bboot-<k>-<i>.service, and reloads.
func bootUnits(projects int) string {
	// One account per project, as bm2's (units.Account): SO_REUSEPORT
	// groups only sockets of one user, and DynamicUser= alone would give
	// each unit its own.
	unit := strings.ReplaceAll(phaseUnit(0, true), "Environment=BM2_APP_PORT=0", "Environment=BM2_APP_PORT=PORT")
	unit = strings.ReplaceAll(unit, "Restart=on-failure\n", "Restart=on-failure\nSlice=bboot.slice\n")
	unit = strings.ReplaceAll(unit, "DynamicUser=yes\n", "DynamicUser=yes\nUser=bboot-PROJECT\n")
	return fmt.Sprintf(`set -e
for k in $(seq 0 %[1]d); do for i in 0 1 2 3; do
	sed "s/=PORT$/=$((%[2]d + k))/; s/=bboot-PROJECT$/=bboot-$k/" > /run/systemd/system/bboot-$k-$i.service <<'UNIT'
%[3]sUNIT
done; done
systemctl daemon-reload`, projects-1, bootBasePort, unit)
}

// bootUnitsTimed starts the hand-written units at once and polls until
// every one listens; "L" and "U" as bootTimed's. Then it stops them.
func bootUnitsTimed(projects int) string {
	return fmt.Sprintf(`set -e
%[1]s
c0=$(cpu); t0=$(date +%%s%%N)
systemctl start --no-block $(for k in $(seq 0 %[2]d); do for i in 0 1 2 3; do printf 'bboot-%%d-%%d.service ' $k $i; done; done)
while [ "$(%[3]s)" -lt %[4]d ]; do
	sleep 0.05
	test $(( ($(date +%%s%%N) - t0) / 1000000 )) -lt 280000 || { echo "not all listening in 280 s"; exit 1; }
done
t1=$(date +%%s%%N); c1=$(cpu)
echo "L $((t1 - t0))"
echo "U $((c1 - c0))"
systemctl stop 'bboot-*.service'
(for i in $(seq 300); do test "$(%[3]s)" -eq 0 && exit 0; sleep 0.1; done; exit 1)`, bootCPU, projects-1, bootListening(projects), projects*4)
}

const bootDown = `systemctl stop 'bm2-bt*.target' 'bm2@bt*' 'bboot-*.service' >/dev/null 2>&1; rm -f /etc/bm2/bt[0-9]*.toml /run/systemd/system/bboot-*.service; systemctl daemon-reload`

// boot starts 4, 20, 80 and 200 instances at once (-quick: up to 80), as
// a boot does, and times how long until every one is confirmed, with the
// CPU it cost, beside the same apps started as bare processes.
func (r *runner) boot(ctx context.Context) error {
	defer r.bm2.sh(context.WithoutCancel(ctx), bootDown)
	r.record("boot", bootUp(5)+"   # 5, 20 or 50 projects of 4 (not timed)", bootUnits(5)+"   # the hand-written units (not timed)",
		bootTimed(5), bootUnitsTimed(5), bootBare(5)+"   # the controls, in the same sandbox", bootDown)
	reps, sizes := min(r.s.StartReps, 3), bootSizes
	if r.s.Quick {
		sizes = bootSizes[:3]
	}
	for _, size := range sizes {
		projects := size / 4
		if out, err := r.bm2.sh(ctx, bootUp(projects)+"\n"+bootUnits(projects)); err != nil {
			return fmt.Errorf("boot %d: %w\n%s", size, err, out)
		}
		variants := []struct{ name, script string }{
			{fmt.Sprintf("bm2, %d instances (%d projects of 4, cluster mode)", size, projects), bootTimed(projects)},
			{fmt.Sprintf("hand-written units with bm2's sandbox directives, %d", size), bootUnitsTimed(projects)},
			{fmt.Sprintf("bare processes, %d instances", size), bootBare(projects)},
		}
		for rep := range reps {
			for k := range variants {
				v := variants[(k+rep)%len(variants)]
				variant, script := v.name, v.script
				out, err := r.bm2.sh(ctx, script)
				if err != nil {
					return fmt.Errorf("boot %s: %w\n%s", variant, err, out)
				}
				vals := map[string]float64{}
				for _, l := range strings.Split(out, "\n") {
					if f := strings.Fields(l); len(f) == 2 && len(f[0]) == 1 {
						n, err := strconv.ParseInt(f[1], 10, 64)
						if err == nil {
							vals[f[0]] = float64(n)
						}
					}
				}
				if _, ok := vals["L"]; !ok {
					return fmt.Errorf("boot %s: no timing in\n%s", variant, out)
				}
				r.sample("boot", variant, "all listening (ms)", rep, vals["L"]/1e6)
				if c, ok := vals["C"]; ok {
					r.sample("boot", variant, "all confirmed (ms)", rep, c/1e6)
				}
				r.sample("boot", variant, "CPU (s)", rep, vals["U"]/1e9)
				r.logf("boot %d/%d %s: listening %v, confirmed %v, CPU %.1f s", rep+1, reps, variant,
					time.Duration(vals["L"]).Round(time.Millisecond), time.Duration(vals["C"]).Round(time.Millisecond), vals["U"]/1e9)
			}
		}
		if out, err := r.bm2.sh(ctx, bootDown); err != nil {
			return fmt.Errorf("boot %d: %w\n%s", size, err, out)
		}
	}
	return nil
}
