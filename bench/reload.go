package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/gateway"
)

// ReloadRun is one reload under load.
type ReloadRun struct {
	Rep      int       `json:"rep"`
	System   string    `json:"system"`
	Mode     string    `json:"mode"`
	Wrk      WrkResult `json:"wrk"`
	Failed   int64     `json:"failed"`    // every error wrk counted
	ReloadMs float64   `json:"reload_ms"` // how long the reload command took
	Exit     int       `json:"exit"`      // its exit status
	InWindow bool      `json:"in_window"` // it returned before wrk ended
	Output   string    `json:"output,omitempty"`
}

// reloadCase is one reload figure: a project of that many instances on its
// own port under each manager.
type reloadCase struct {
	name      string // bm2 project (in /srv/<name>) and PM2 app name
	instances int
	port      int
	res       *ReloadResults
	// fork: fork mode, instance i on port+i (bm2: exec_mode = "fork";
	// PM2: exec_mode "fork" with increment_var PORT).
	fork bool
	// gateway > 0: the load goes through nginx on this port, in each
	// sandbox, with the configuration `bm2 gateway nginx` prints for the
	// bm2 project (the same bytes in both).
	gateway int
	// nginxDefaults: that configuration without its max_fails=0, so
	// nginx marks a server down as it does by default (max_fails=1
	// fail_timeout=10s).
	nginxDefaults bool
	// bm2Only: PM2 has no counterpart (Bun in cluster mode).
	bm2Only bool
	// phases: each bm2 reload is broken down from the journal too
	// (reloadphases), and PM2's time per worker set beside it, and the
	// same rolling restart of hand-written units (floorSystem) runs
	// interleaved with both, in bm2's sandbox.
	phases bool
}

// floorSystem is the rolling restart systemd itself allows: the
// instances as hand-written units with bm2's sandbox directives (no
// hooks, no fence, no probe, no drain, no wrapper), a fifth as the surge,
// each restarted with systemctl restart and waited for until its new
// process listens (ss, every 5 ms), on a port of their own in bm2's
// sandbox. It is what a reload of bm2's could take with nothing of bm2's
// on its path.
const (
	floorSystem = "units"
	floorName   = "hand-written units (the floor)"
	floorPort   = 3650
)

// floorUnit is hand-written instance i (or "surge", BM2_APP_INSTANCE=n)
// of the floor: phaseUnit's sandboxed unit, reusePort (BM2_APP_PORT) on
// floorPort, and one dynamic user for all of them, which SO_REUSEPORT
// needs.
func floorUnit(instance string) string {
	return strings.Replace(phaseUnitDelay(floorPort, true, "100ms"), "DynamicUser=yes\n",
		"DynamicUser=yes\nUser=bm2floor\nEnvironment=BM2_APP_INSTANCE="+instance+"\n", 1)
}

// floorUp installs and starts the n floor units (not the surge).
func floorUp(n int) string {
	var b strings.Builder
	b.WriteString("set -e\n")
	for i := range n + 1 {
		name, inst := fmt.Sprintf("bfloor-%d", i), fmt.Sprint(i)
		if i == n {
			name = "bfloor-surge"
		}
		fmt.Fprintf(&b, "cat > /run/systemd/system/%s.service <<'UNIT'\n%sUNIT\n", name, floorUnit(inst))
	}
	b.WriteString("systemctl daemon-reload\n")
	for i := range n {
		fmt.Fprintf(&b, "systemctl start bfloor-%d.service\n", i)
	}
	fmt.Fprintf(&b, "(for i in $(seq 300); do test $(ss -Hltn 'sport = :%d' | wc -l) -ge %d && exit 0; sleep 0.05; done; exit 1)", floorPort, n)
	return b.String()
}

// floorReload is the floor's rolling restart of n units: the surge up,
// each unit restarted in turn and waited for until its new process
// listens, the surge's stop queued.
func floorReload(n int) string {
	return fmt.Sprintf(`listens() { ss -Hltnp 'sport = :%d' | grep -q "pid=$1,"; }
back() { p=$(systemctl show -P MainPID "$1"); for k in $(seq 6000); do listens "$p" && return 0; sleep 0.005; done; echo "$1 not back"; return 1; }
systemctl start bfloor-surge.service && back bfloor-surge.service
for i in $(seq 0 %d); do systemctl restart bfloor-$i.service && back bfloor-$i.service; done
systemctl stop --no-block bfloor-surge.service`, floorPort, n-1)
}

// floorSettle waits for the floor's surge to be gone.
const floorSettle = "(for i in $(seq 300); do systemctl is-active -q bfloor-surge.service || exit 0; sleep 0.1; done; exit 1) && sleep 2"

// floorDown removes the floor's units.
const floorDown = "systemctl stop 'bfloor-*'; rm -f /run/systemd/system/bfloor-*.service; systemctl daemon-reload"

func (c reloadCase) url() string {
	if c.gateway > 0 {
		return fmt.Sprintf("http://127.0.0.1:%d/", c.gateway)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/", c.port)
}

// appURL is where the app itself answers (its first instance).
func (c reloadCase) appURL() string { return fmt.Sprintf("http://127.0.0.1:%d/", c.port) }

// reloadScript runs wrk for d, reloads after 2 s and reports the reload's
// exit status and duration and wrk's totals.
func reloadScript(threads, conns int, d time.Duration, mode, url, reloadCmd string) string {
	return fmt.Sprintf(`%s > /tmp/wrk.out 2>&1 &
w=$!
sleep 2
s=$(date +%%s%%N)
%s > /tmp/reload.out 2>&1; rc=$?
e=$(date +%%s%%N)
running=0; kill -0 $w 2>/dev/null && running=1
wait $w
echo "RELOAD rc=$rc ms=$(( (e - s) / 1000000 )) in_window=$running"
cat /tmp/wrk.out; echo ---; tail -n 20 /tmp/reload.out`, wrkCmd(threads, conns, d, mode, url), reloadCmd)
}

// reload: failed requests while each manager reloads its 2 instances under
// steady wrk load. bm2's side runs only when `bm2 reload --help` succeeds.
func (r *runner) reload(ctx context.Context) error {
	return r.reloadFigure(ctx, reloadCase{name: "reload", instances: 2, port: 3300, res: &r.res.Reload})
}

// reload1: the same with 1 instance (bm2: cluster mode, instances = 1;
// PM2: -i 1, node:cluster with one worker).
func (r *runner) reload1(ctx context.Context) error {
	return r.reloadFigure(ctx, reloadCase{name: "reload1", instances: 1, port: 3400, res: &r.res.Reload1})
}

// reload4: the same with 4 instances (bm2: cluster mode, instances = 4;
// PM2: -i 4).
func (r *runner) reload4(ctx context.Context) error {
	return r.reloadFigure(ctx, reloadCase{name: "reload4", instances: 4, port: 3600, phases: true, res: &r.res.Reload4})
}

// reloadBun: the reload figure with Bun (bm2 only: PM2's cluster mode
// needs node:cluster).
func (r *runner) reloadBun(ctx context.Context) error {
	return r.reloadFigure(ctx, reloadCase{name: "reloadbun", instances: 2, port: 4000, bm2Only: true, res: &r.res.ReloadBun})
}

// reloadFigure measures one reload case: both managers' projects up,
// then the interleaved runs under each load, then everything taken down.
func (r *runner) reloadFigure(ctx context.Context, c reloadCase) error {
	out, err := r.bm2.sh(ctx, "bm2 reload --help >/dev/null 2>&1; echo $?")
	bm2Has := err == nil && strings.TrimSpace(out) == "0"
	c.res.Bm2Available = bm2Has
	c.res.Bm2Check = "bm2 reload --help   # exit status " + strings.TrimSpace(out)
	if c.gateway > 0 {
		if _, err := r.bm2.sh(ctx, "command -v nginx >/dev/null && bm2 gateway --help >/dev/null"); err != nil {
			r.logf("%s: nginx or `bm2 gateway` is not there: skipped", c.name)
			c.res.Bm2Check = "command -v nginx && bm2 gateway --help   # failed: the figure needs both"
			return nil
		}
	}
	bm2Start, pm2Start := r.reloadStarts(c)
	if !bm2Has {
		r.logf("%s: `bm2 reload` is not available (exit %s): measuring PM2 only", c.name, strings.TrimSpace(out))
	} else if out, err := r.bm2.sh(ctx, bm2Start); err != nil {
		return fmt.Errorf("bm2 serve: %w\n%s", err, out)
	}
	if c.bm2Only && !bm2Has {
		return nil
	}
	if err := r.reloadUp(ctx, c, bm2Has, pm2Start); err != nil {
		return err
	}
	if err := r.reloadRuns(ctx, c, bm2Has); err != nil {
		return err
	}
	if bm2Has {
		r.bm2.sh(ctx, "bm2 delete "+c.name+" >/dev/null")
	}
	if c.phases {
		r.bm2.sh(ctx, floorDown)
	}
	r.pm2.sh(ctx, "pm2 kill >/dev/null")
	if c.gateway > 0 {
		for _, b := range r.beds(c) {
			b.sh(ctx, gatewayStop)
		}
	}
	return nil
}

// waitAnswer is a script that waits for url to answer, up to 30 s.
func waitAnswer(url string) string {
	return fmt.Sprintf("(for i in $(seq 300); do curl -sf -o /dev/null %s && exit 0; sleep 0.1; done; exit 1)", url)
}

// reloadStarts are the scripts that start a reload case's project under
// bm2 and under PM2 (none for a bm2-only case), recorded with its
// project file.
func (r *runner) reloadStarts(c reloadCase) (bm2Start, pm2Start string) {
	bm2Start = "cd /srv/" + c.name + " && bm2 serve >/dev/null && " + probesDone
	pm2Start = fmt.Sprintf("cd /srv/bench && PORT=%d pm2 start app.js -i %d --name %s >/dev/null && %s",
		c.port, c.instances, c.name, waitAnswer(c.appURL()))
	if c.bm2Only {
		pm2Start = ""
	}
	mode := "cluster mode"
	if c.fork {
		mode = "fork mode: instance i on port+i"
		bm2Start = fmt.Sprintf("install -d -m 0755 /srv/%[1]s && cp /srv/bench/app.js /srv/%[1]s/ && printf 'name = \"%[1]s\"\\nscript = \"app.js\"\\nruntime = \"node\"\\ninstances = %[2]d\\nport = %[3]d\\nexec_mode = \"fork\"\\n' >/srv/%[1]s/bm2.toml && %[4]s",
			c.name, c.instances, c.port, bm2Start)
		pm2Start = fmt.Sprintf(`cd /srv/bench && printf 'module.exports = { apps: [{ name: "%[1]s", script: "app.js", instances: %[2]d, exec_mode: "fork", increment_var: "PORT", env: { PORT: %[3]d } }] }\n' >%[1]s.config.js && pm2 start %[1]s.config.js >/dev/null && %[4]s`,
			c.name, c.instances, c.port, waitAnswer(c.appURL()))
	}
	script, runtime := "app.js", "node"
	for _, p := range bm2Projects {
		if p.name == c.name {
			script, runtime = p.script, p.runtime
		}
	}
	r.record(c.name, "bm2 reload --help >/dev/null   # exit status 0: the bm2 side runs",
		fmt.Sprintf("cat /srv/%s/bm2.toml   # name = %q, script = %q, runtime = %q, instances = %d, port = %d (%s)", c.name, c.name, script, runtime, c.instances, c.port, mode),
		bm2Start)
	if !c.bm2Only {
		r.record(c.name, pm2Start)
	}
	return bm2Start, pm2Start
}

// reloadUp starts PM2's side (bm2's has started), waits for every
// fork-mode instance, and starts the gateways and the floor's units when
// the case has them.
func (r *runner) reloadUp(ctx context.Context, c reloadCase, bm2Has bool, pm2Start string) error {
	if !c.bm2Only {
		if out, err := r.pm2.sh(ctx, pm2Start); err != nil {
			return fmt.Errorf("pm2 start: %w\n%s", err, out)
		}
	}
	if c.fork {
		// Every instance answers on its own port before the first run.
		for _, b := range r.beds(c) {
			if b == r.bm2 && !bm2Has {
				continue
			}
			for i := range c.instances {
				url := fmt.Sprintf("http://127.0.0.1:%d/", c.port+i)
				if out, err := b.sh(ctx, waitAnswer(url)); err != nil {
					return fmt.Errorf("%s: %s does not answer: %w\n%s", b.kind, url, err, out)
				}
			}
		}
	}
	if c.gateway > 0 {
		if err := r.startGateways(ctx, c); err != nil {
			return err
		}
	}
	if c.phases {
		r.record(c.name, "# the floor, in the bm2 sandbox: "+fmt.Sprint(c.instances)+" hand-written units and a surge, /run/systemd/system/bfloor-{0.."+fmt.Sprint(c.instances-1)+",surge}.service:",
			floorUnit("<i>"), floorUp(c.instances), "# its reload (RELOAD below), then the settle: "+floorSettle, floorReload(c.instances))
		if out, err := r.bm2.sh(ctx, floorUp(c.instances)); err != nil {
			return fmt.Errorf("the floor's units: %w\n%s", err, out)
		}
	}
	return nil
}

// reloadRuns are a case's runs: each repetition under each load, the
// systems in a rotating order.
func (r *runner) reloadRuns(ctx context.Context, c reloadCase, bm2Has bool) error {
	s := r.s
	bm2Reload, pm2Reload := "bm2 reload "+c.name, "pm2 reload "+c.name
	reloads, settles := bm2Reload+" | "+pm2Reload, "bm2: "+probesDone+" && sleep 2   PM2: sleep 2"
	if c.bm2Only {
		reloads, settles = bm2Reload, probesDone+" && sleep 2"
	}
	r.record(c.name,
		"# each run, with RELOAD = "+reloads+", once with keep-alive and once with -H 'Connection: close':",
		reloadScript(s.WrkThreads, s.WrkConns, s.ReloadDur, KeepAlive, c.url(), "RELOAD"),
		"# settle between runs (not timed): "+settles)
	for rep := range s.ReloadReps {
		for _, mode := range []string{KeepAlive, Close} {
			order := []string{"bm2", "pm2"}
			if rep%2 == 1 {
				order = []string{"pm2", "bm2"}
			}
			if c.phases {
				order = [][]string{{"bm2", floorSystem, "pm2"}, {"pm2", "bm2", floorSystem}, {floorSystem, "pm2", "bm2"}}[rep%3]
			}
			for _, sys := range order {
				if (sys == "pm2" && c.bm2Only) || (sys == "bm2" && !bm2Has) {
					continue
				}
				if err := r.reloadOnce(ctx, c, sys, mode, rep); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// reloadOnce is one run of one system under one load: the reload under
// wrk, its phases or its time per instance recorded, then the settle.
func (r *runner) reloadOnce(ctx context.Context, c reloadCase, sys, mode string, rep int) error {
	s := r.s
	b, cmd, settle := r.pm2, "pm2 reload "+c.name, "sleep 2"
	switch sys {
	case floorSystem:
		b, cmd, settle = r.bm2, floorReload(c.instances), floorSettle
	case "bm2":
		b, cmd, settle = r.bm2, "bm2 reload "+c.name, probesDone+" && sleep 2"
	}
	since := ""
	if c.phases && sys == "bm2" {
		t, err := b.sh(ctx, "date +%s.%N")
		if err != nil {
			return err
		}
		since = strings.TrimSpace(t)
	}
	out, err := b.sh(ctx, reloadScript(s.WrkThreads, s.WrkConns, s.ReloadDur, mode, c.url(), cmd))
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", cmd, err, out)
	}
	run, err := parseReload(out)
	if err != nil {
		return err
	}
	run.Rep, run.System, run.Mode = rep, sys, mode
	c.res.Runs = append(c.res.Runs, run)
	if c.phases && sys == "bm2" && run.Exit == 0 {
		if err := r.recordReloadPhases(ctx, c, mode, rep, since); err != nil {
			return err
		}
	} else if c.phases && run.Exit == 0 && sys == floorSystem {
		r.sample("reloadphases", fmt.Sprintf("hand-written units with bm2's sandbox (the floor), %s, per unit (the restart's time ÷ %d)", mode, c.instances),
			"step total", rep, run.ReloadMs/float64(c.instances))
	} else if c.phases && run.Exit == 0 {
		r.sample("reloadphases", fmt.Sprintf("PM2, %s, per worker (pm2 reload's time ÷ %d)", mode, c.instances),
			"step total", rep, run.ReloadMs/float64(c.instances))
	}
	r.logf("%s %d/%d %s %-17s %d of %d requests failed; reload took %.0f ms (exit %d)",
		c.name, rep+1, s.ReloadReps, sys, mode, run.Failed, run.Wrk.Requests, run.ReloadMs, run.Exit)
	if out, err := b.sh(ctx, settle); err != nil {
		return fmt.Errorf("settle: %w\n%s", err, out)
	}
	return nil
}

// beds are the sandboxes a reload case runs in.
func (r *runner) beds(c reloadCase) []*bed {
	if c.bm2Only {
		return []*bed{r.bm2}
	}
	return []*bed{r.bm2, r.pm2}
}

// gatewayReload: failed requests while each manager reloads a fork-mode
// project of 3 instances behind the same nginx, configured by
// `bm2 gateway nginx` (bm2 vs PM2 fork mode, which restarts its processes
// just as one at a time, behind the same gateway).
func (r *runner) gatewayReload(ctx context.Context) error {
	return r.reloadFigure(ctx, reloadCase{name: "gwreload", instances: 3, port: 3500, fork: true, gateway: 8350, res: &r.res.GatewayReload})
}

// gatewayDefaults: the gwreload figure behind nginx's defaults (the same
// configuration without max_fails=0), what a hand-written upstream gets.
func (r *runner) gatewayDefaults(ctx context.Context) error {
	return r.reloadFigure(ctx, reloadCase{name: "gwdefault", instances: 3, port: 4200, fork: true, gateway: 8420, nginxDefaults: true, res: &r.res.GatewayDefault})
}

// gatewayCluster: a cluster-mode reload of 2 instances behind the same
// nginx (one server line: the instances share the port).
func (r *runner) gatewayCluster(ctx context.Context) error {
	return r.reloadFigure(ctx, reloadCase{name: "gwcluster", instances: 2, port: 4100, gateway: 8410, res: &r.res.GatewayCluster})
}

// The gateway of the gwreload figure: nginx from a private prefix in the
// sandbox's tmpfs.
const (
	gatewayDir  = "/tmp/gw"
	gatewayStop = "kill $(cat /tmp/gw/nginx.pid) 2>/dev/null; true"
)

// startGateways prints the nginx configuration for the bm2 project in the
// bm2 sandbox and runs nginx with the same bytes in both sandboxes.
func (r *runner) startGateways(ctx context.Context, c reloadCase) error {
	gen := fmt.Sprintf("bm2 gateway nginx %s --listen 127.0.0.1:%d", c.name, c.gateway)
	snippet, err := r.bm2.sh(ctx, gen)
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", gen, err, snippet)
	}
	conf := gateway.NginxStandalone(gatewayDir, "", "    include "+gatewayDir+"/bm2.conf;")
	start := fmt.Sprintf("nginx -p %[1]s -c %[1]s/nginx.conf -e %[1]s/error.log -g 'pid %[1]s/nginx.pid;'", gatewayDir)
	r.record(c.name, gen+" > "+gatewayDir+"/bm2.conf   # in the bm2 sandbox; the same bytes in the PM2 sandbox")
	if c.nginxDefaults {
		n := strings.Count(snippet, " max_fails=0;")
		snippet = strings.ReplaceAll(snippet, " max_fails=0;", ";")
		r.record(c.name, fmt.Sprintf("sed -i 's/ max_fails=0;/;/' %s/bm2.conf   # nginx's defaults on its %d server lines: max_fails=1 fail_timeout=10s", gatewayDir, n))
	}
	r.record(c.name,
		"# "+gatewayDir+"/nginx.conf: worker_processes 1; events {} http { access_log off; temporary paths in "+gatewayDir+"; include "+gatewayDir+"/bm2.conf; }",
		start+" && "+fmt.Sprintf("(for i in $(seq 300); do curl -sf -o /dev/null %s && exit 0; sleep 0.1; done; exit 1)", c.url()))
	for _, b := range r.beds(c) {
		for f, data := range map[string]string{"bm2.conf": snippet, "nginx.conf": conf} {
			if err := b.WriteFile(gatewayDir+"/"+f, []byte(data), 0o644); err != nil {
				return err
			}
		}
		script := start + " && " + fmt.Sprintf("(for i in $(seq 300); do curl -sf -o /dev/null %s && exit 0; sleep 0.1; done; exit 1)", c.url())
		if out, err := b.sh(ctx, script); err != nil {
			return fmt.Errorf("nginx in the %s sandbox: %w\n%s", b.kind, err, out)
		}
	}
	return nil
}

func parseReload(out string) (ReloadRun, error) {
	var run ReloadRun
	w, err := parseWrk(out)
	if err != nil {
		return run, err
	}
	run.Wrk, run.Failed = w, w.Errors()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "RELOAD "); ok {
			for _, f := range strings.Fields(rest) {
				k, v, _ := strings.Cut(f, "=")
				n, _ := strconv.Atoi(v)
				switch k {
				case "rc":
					run.Exit = n
				case "ms":
					run.ReloadMs = float64(n)
				case "in_window":
					run.InWindow = n == 1
				}
			}
		}
	}
	if _, tail, ok := strings.Cut(out, "\n---\n"); ok && run.Exit != 0 {
		run.Output = strings.TrimSpace(tail)
	}
	return run, nil
}
