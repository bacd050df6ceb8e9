package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The start figure's variants.
const (
	StartBm2      = "bm2 serve"
	StartBm2Start = "bm2 start (registered, stopped)"
	StartPM2Warm  = "pm2 start (daemon running)"
	StartPM2Cold  = "pm2 start (no daemon yet)"
	// systemd's floor: the same 4 instances as hand-written units with
	// bm2's sandbox directives (no hook, fence, probe, wrapper or
	// steering), started as bm2 serve starts new units (written, then a
	// daemon-reload, then their target) and as bm2 start starts loaded
	// ones (their target).
	StartFloorNew    = "hand-written units, new (written, daemon-reload, started)"
	StartFloorLoaded = "hand-written units, loaded (systemctl start)"
)

// startVariants is every variant, in the order of the report.
var startVariants = []string{StartBm2, StartBm2Start, StartPM2Warm, StartPM2Cold, StartFloorNew, StartFloorLoaded}

// floorStart tells whether variant is one of the start floor's.
func floorStart(variant string) bool {
	return variant == StartFloorNew || variant == StartFloorLoaded
}

// floorStartUnit is hand-written instance i of the start floor:
// phaseUnit's sandboxed unit on the start figure's port, one dynamic user
// for all 4 (SO_REUSEPORT needs it), part of bfst.target.
func floorStartUnit(i int) string {
	u := strings.Replace(phaseUnit(3100, true), "DynamicUser=yes\n",
		fmt.Sprintf("DynamicUser=yes\nUser=bfst\nEnvironment=BM2_APP_INSTANCE=%d\n", i), 1)
	return "[Unit]\nPartOf=bfst.target\n\n" + u
}

// floorStartTarget wants the 4 floor units and is ordered after them, so
// that systemctl start returns once all 4 have started (Type=exec: their
// process runs).
const floorStartTarget = "[Unit]\nWants=bfst-0.service bfst-1.service bfst-2.service bfst-3.service\nAfter=bfst-0.service bfst-1.service bfst-2.service bfst-3.service\n"

// The start floor's steps: its files are kept in /srv/bfst and copied
// into /run/systemd/system by the timed command of the "new" variant.
const (
	floorStartFiles  = "/srv/bfst/bfst-0.service /srv/bfst/bfst-1.service /srv/bfst/bfst-2.service /srv/bfst/bfst-3.service /srv/bfst/bfst.target"
	floorStartGone   = "{ systemctl stop bfst.target 'bfst-*' 2>/dev/null; rm -f /run/systemd/system/bfst*; systemctl daemon-reload; }"
	floorStartNewCmd = "cp " + floorStartFiles + " /run/systemd/system/ && systemctl daemon-reload && systemctl start bfst.target"
	floorStartLoaded = "{ test -f /run/systemd/system/bfst.target || { cp " + floorStartFiles + " /run/systemd/system/ && systemctl daemon-reload; }; } && systemctl stop bfst.target 'bfst-*'"
)

// StartRun is one start of 4 instances, with the memory seen before and
// after.
type StartRun struct {
	Rep     int         `json:"rep"`
	Variant string      `json:"variant"`
	Result  StartResult `json:"result"`
	Mem     MemSample   `json:"memory"`
}

// MemSample is the memory figure of one start run (KiB).
type MemSample struct {
	// bm2: every process whose name starts with "bm2", after the probes
	// finished (expected: none), and their RSS.
	Bm2Procs   []string `json:"bm2_procs,omitempty"`
	Bm2RSS     int64    `json:"bm2_rss_kib"`
	PID1Before int64    `json:"pid1_before_kib,omitempty"`
	PID1After  int64    `json:"pid1_after_kib,omitempty"`
	JournalΔ   int64    `json:"journald_delta_kib,omitempty"`
	// PM2: the God daemon (node:cluster primary and supervisor).
	GodRSS int64 `json:"god_rss_kib,omitempty"`
	GodPSS int64 `json:"god_pss_kib,omitempty"`
	// The 4 app processes (RSS each), under either manager.
	AppRSS []int64 `json:"app_rss_kib"`
}

// AppMedian is the median app process RSS.
func (m MemSample) AppMedian() float64 {
	xs := make([]float64, len(m.AppRSS))
	for i, v := range m.AppRSS {
		xs[i] = float64(v)
	}
	_, med := minMed(xs)
	return med
}

const startURL = "http://127.0.0.1:3100/"

// portFree is a script that waits until nothing answers on startURL.
var portFree = fmt.Sprintf("(for i in $(seq 100); do curl -s -o /dev/null %s || exit 0; sleep 0.1; done; exit 1)", startURL)

// probesDone waits until no bm2-probe@ unit is running any more.
const probesDone = `(for i in $(seq 300); do systemctl list-units --no-legend --plain --state=activating,deactivating 'bm2-probe@*' | grep -q . || exit 0; sleep 0.1; done; exit 1)`

// bm2Stopped makes sure project start is registered (bm2 serve, when an
// earlier variant deleted it) and stopped.
var bm2Stopped = "{ test -f /etc/bm2/start.toml || bm2 serve /srv/start >/dev/null; } && " + probesDone + " && bm2 stop start >/dev/null && " + portFree

// start measures starting 4 instances, and the memory figure afterwards.
// Each repetition runs the variants in rotating order; every run but bm2
// start's starts from nothing registered and running (bm2 delete / pm2
// delete); bm2 start's starts from the project registered and stopped.
// With -only startcmd (and neither start nor memory), only the bm2
// variants run.
func (r *runner) start(ctx context.Context) error {
	variants := startVariants
	if !r.s.wants("start") && !r.s.wants("memory") {
		variants = []string{StartBm2, StartBm2Start}
	}
	if slices.Contains(variants, StartFloorNew) {
		for i := range 4 {
			if err := r.bm2.WriteFile(fmt.Sprintf("/srv/bfst/bfst-%d.service", i), []byte(floorStartUnit(i)), 0o644); err != nil {
				return err
			}
		}
		if err := r.bm2.WriteFile("/srv/bfst/bfst.target", []byte(floorStartTarget), 0o644); err != nil {
			return err
		}
		defer r.bm2.sh(context.WithoutCancel(ctx), floorStartGone)
	}
	r.record("start",
		"bm2 delete start; "+portFree+"   # before (not timed)",
		"bench-helper _helper start -url "+startURL+" -confirm bm2:start:4 -- bm2 serve /srv/start",
		"# settle, then the memory snapshot: "+probesDone+"; sleep 1; bench-helper _helper procs",
		bm2Stopped+"   # bm2 start variant, before (not timed)",
		"bench-helper _helper start -url "+startURL+" -confirm bm2:start:4 -- bm2 start start",
		"pm2 ping   # warm variant: daemon up before (not timed);  cold variant: pm2 kill",
		"pm2 delete start; "+portFree+"   # before (not timed)",
		"cd /srv/bench && PORT=3100 bench-helper _helper start -url "+startURL+" -confirm pm2:start:4 -- pm2 start app.js -i 4 --name start",
		"# the floor, in the bm2 sandbox: /srv/bfst/bfst-{0..3}.service, each:",
		floorStartUnit(0),
		"# and /srv/bfst/bfst.target:",
		floorStartTarget,
		"bm2 stop start; "+floorStartGone+"; "+portFree+"   # new variant, before (not timed)",
		"bench-helper _helper start -url "+startURL+" -confirm units:bfst:4 -- sh -c '"+floorStartNewCmd+"'",
		"bm2 stop start; "+floorStartLoaded+"; "+portFree+"   # loaded variant, before (not timed)",
		"bench-helper _helper start -url "+startURL+" -confirm units:bfst:4 -- systemctl start bfst.target",
	)
	for rep := range r.s.StartReps {
		for k := range variants {
			v := variants[(k+rep)%len(variants)]
			run, err := r.startOnce(ctx, rep, v)
			if err != nil {
				return fmt.Errorf("%s: %w", v, err)
			}
			r.res.Start = append(r.res.Start, *run)
			res := run.Result
			r.logf("start %d/%d %-31s returned %6.0f ms  confirmed %6.0f ms  port %6.0f ms",
				rep+1, r.s.StartReps, v, ms(res.ReturnUs), ms(res.ConfirmUs), ms(res.PortUs))
			if v == StartBm2 || v == StartBm2Start {
				r.logf("      memory: bm2 processes %d KiB %v, PID 1 %+d KiB, apps %v KiB",
					run.Mem.Bm2RSS, run.Mem.Bm2Procs, run.Mem.PID1After-run.Mem.PID1Before, run.Mem.AppRSS)
			} else if floorStart(v) {
				r.logf("      memory: units %v KiB", run.Mem.AppRSS)
			} else {
				r.logf("      memory: God daemon %d KiB, workers %v KiB", run.Mem.GodRSS, run.Mem.AppRSS)
			}
		}
	}
	return nil
}

func ms(us int64) float64 { return float64(us) / 1000 }

func (r *runner) startOnce(ctx context.Context, rep int, variant string) (*StartRun, error) {
	run := &StartRun{Rep: rep, Variant: variant}
	var b *bed
	var pre, cmdPre string
	var args []string
	switch variant {
	case StartBm2:
		b = r.bm2
		pre = "bm2 delete start >/dev/null 2>&1; " + portFree
		args = []string{"start", "-url", startURL, "-confirm", "bm2:start:4", "--", "bm2", "serve", "/srv/start"}
	case StartBm2Start:
		b = r.bm2
		pre = bm2Stopped
		args = []string{"start", "-url", startURL, "-confirm", "bm2:start:4", "--", "bm2", "start", "start"}
	case StartPM2Warm, StartPM2Cold:
		b = r.pm2
		pre = "pm2 ping >/dev/null && { pm2 delete start >/dev/null 2>&1; true; } && " + portFree
		if variant == StartPM2Cold {
			pre = "pm2 kill >/dev/null 2>&1; " + portFree
		}
		cmdPre = "cd /srv/bench && PORT=3100"
		args = []string{"start", "-url", startURL, "-confirm", "pm2:start:4", "--", "pm2", "start", "app.js", "-i", "4", "--name", "start"}
	case StartFloorNew:
		b = r.bm2
		pre = "{ bm2 stop start >/dev/null 2>&1; true; } && " + floorStartGone + " && " + portFree
		args = []string{"start", "-url", startURL, "-confirm", "units:bfst:4", "--", "sh", "-c", floorStartNewCmd}
	case StartFloorLoaded:
		b = r.bm2
		pre = "{ bm2 stop start >/dev/null 2>&1; true; } && " + floorStartLoaded + " && " + portFree
		args = []string{"start", "-url", startURL, "-confirm", "units:bfst:4", "--", "systemctl", "start", "bfst.target"}
	}
	floor := floorStart(variant)
	if out, err := b.sh(ctx, pre); err != nil {
		return nil, fmt.Errorf("prepare: %w\n%s", err, out)
	}
	var before []Proc
	if err := b.helper(ctx, "", &before, "procs"); err != nil {
		return nil, err
	}
	if err := b.helper(ctx, cmdPre, &run.Result, args...); err != nil {
		return nil, err
	}
	if run.Result.Exit != 0 {
		return nil, fmt.Errorf("exit %d:\n%s", run.Result.Exit, run.Result.Output)
	}
	// Settle: every probe has finished; a second more for good measure.
	settle := "sleep 1"
	if b == r.bm2 && !floor {
		settle = probesDone + " && sleep 1"
	}
	if out, err := b.sh(ctx, settle); err != nil {
		return nil, fmt.Errorf("settle: %w\n%s", err, out)
	}
	var after []Proc
	if err := b.helper(ctx, "", &after, "procs"); err != nil {
		return nil, err
	}
	kind := b.kind
	if floor {
		kind = "units"
	}
	run.Mem = memSample(kind, before, after)
	if floor {
		// The port is the other variants' too.
		if out, err := b.sh(ctx, "systemctl stop bfst.target 'bfst-*' && "+portFree); err != nil {
			return nil, fmt.Errorf("stop the floor: %w\n%s", err, out)
		}
	}
	if len(run.Mem.AppRSS) != 4 {
		return nil, fmt.Errorf("found %d app processes, want 4", len(run.Mem.AppRSS))
	}
	return run, nil
}

// memSample reads the memory figure out of process lists taken before the
// start and after it settled.
func memSample(kind string, before, after []Proc) MemSample {
	var m MemSample
	byPID := func(ps []Proc, pid int) *Proc {
		for i := range ps {
			if ps[i].PID == pid {
				return &ps[i]
			}
		}
		return nil
	}
	byComm := func(ps []Proc, comm string) int64 {
		for _, p := range ps {
			if p.Comm == comm {
				return p.RSSKiB
			}
		}
		return 0
	}
	switch kind {
	case "bm2":
		for _, p := range after {
			if strings.HasPrefix(p.Comm, "bm2") {
				m.Bm2Procs = append(m.Bm2Procs, fmt.Sprintf("%s[%d]", p.Comm, p.PID))
				m.Bm2RSS += p.RSSKiB
			}
			if strings.Contains(p.Cgroup, "/bm2@start-") && !strings.HasPrefix(p.Comm, "bm2") {
				m.AppRSS = append(m.AppRSS, p.RSSKiB)
			}
		}
		if p := byPID(before, 1); p != nil {
			m.PID1Before = p.RSSKiB
		}
		if p := byPID(after, 1); p != nil {
			m.PID1After = p.RSSKiB
		}
		m.JournalΔ = byComm(after, "systemd-journal") - byComm(before, "systemd-journal")
	case "units":
		for _, p := range after {
			if strings.Contains(p.Cgroup, "/bfst-") {
				m.AppRSS = append(m.AppRSS, p.RSSKiB)
			}
		}
	case "pm2":
		if g := findGod(after); g != nil {
			m.GodRSS, m.GodPSS = g.RSSKiB, g.PSSKiB
			for _, p := range after {
				if p.PPID == g.PID {
					m.AppRSS = append(m.AppRSS, p.RSSKiB)
				}
			}
		}
	}
	sort.Slice(m.AppRSS, func(i, j int) bool { return m.AppRSS[i] < m.AppRSS[j] })
	return m
}
