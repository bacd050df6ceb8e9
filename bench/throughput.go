package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// WrkResult is what apps/report.lua prints after a wrk run.
type WrkResult struct {
	Requests   int64 `json:"requests"`
	DurationUs int64 `json:"duration_us"`
	Bytes      int64 `json:"bytes"`
	Connect    int64 `json:"connect"`
	Read       int64 `json:"read"`
	Write      int64 `json:"write"`
	Status     int64 `json:"status"`
	Timeout    int64 `json:"timeout"`
	P50Us      int64 `json:"p50_us"`
	P99Us      int64 `json:"p99_us"`
	MaxUs      int64 `json:"max_us"`
}

// RPS is requests per second.
func (w WrkResult) RPS() float64 {
	if w.DurationUs == 0 {
		return 0
	}
	return float64(w.Requests) / (float64(w.DurationUs) / 1e6)
}

// Errors is every failed request wrk counted: socket errors and non-2xx/3xx.
func (w WrkResult) Errors() int64 { return w.Connect + w.Read + w.Write + w.Status + w.Timeout }

func parseWrk(out string) (WrkResult, error) {
	var w WrkResult
	for _, l := range strings.Split(out, "\n") {
		if j, ok := strings.CutPrefix(l, "WRKJSON "); ok {
			return w, json.Unmarshal([]byte(j), &w)
		}
	}
	return w, fmt.Errorf("no WRKJSON line in wrk's output:\n%s", out)
}

// The two load shapes.
const (
	KeepAlive = "keep-alive"
	Close     = "Connection: close"
)

func wrkCmd(threads, conns int, d time.Duration, mode, url string) string {
	hdr := ""
	if mode == Close {
		hdr = "-H 'Connection: close' "
	}
	return fmt.Sprintf("wrk -t%d -c%d -d%ds -s /srv/bench/report.lua %s%s", threads, conns, int(d.Seconds()), hdr, url)
}

// TputRun is one measured wrk run.
type TputRun struct {
	Rep    int       `json:"rep"`
	System string    `json:"system"`
	Mode   string    `json:"mode"`
	Wrk    WrkResult `json:"wrk"`
	RPS    float64   `json:"rps"`
	// For PM2: its God daemon's RSS (KiB) right after the run; 0 otherwise.
	GodRSSKiB int64 `json:"god_rss_kib,omitempty"`
}

// tputSystem is one contender of the throughput figure.
type tputSystem struct {
	name  string
	bed   *bed
	url   string
	start string // a script that returns once the app answers
	stop  string
}

func (r *runner) tputSystems() []tputSystem {
	wait := func(url string) string {
		return fmt.Sprintf("(for i in $(seq 300); do curl -sf -o /dev/null %s && exit 0; sleep 0.1; done; exit 1)", url)
	}
	return []tputSystem{
		{"bm2 + Node.js", r.bm2, "http://127.0.0.1:3000/",
			"cd /srv/tput-node && bm2 serve >/dev/null && " + wait("http://127.0.0.1:3000/"),
			"bm2 delete tput-node >/dev/null"},
		{"PM2 + Node.js", r.pm2, "http://127.0.0.1:3000/",
			"cd /srv/bench && PORT=3000 pm2 start app.js -i 2 --name tput >/dev/null && " + wait("http://127.0.0.1:3000/"),
			"pm2 kill >/dev/null"},
		{"bm2 + Bun", r.bm2, "http://127.0.0.1:3001/",
			"cd /srv/tput-bun && bm2 serve >/dev/null && " + wait("http://127.0.0.1:3001/"),
			"bm2 delete tput-bun >/dev/null"},
		// The controls, in bm2's sandbox: the same 2 reusePort processes
		// with no manager at all, and as hand-written units with and
		// without bm2's sandbox directives (no probe, no steering).
		{TputBare, r.bm2, "http://127.0.0.1:3002/",
			"cd /srv/bench && for i in 0 1; do BM2_APP_PORT=3002 BM2_APP_INSTANCE=$i setsid node app.js </dev/null >/dev/null 2>&1 & echo $! >> /run/btput-bare.pids; done; " + wait("http://127.0.0.1:3002/"),
			"kill $(cat /run/btput-bare.pids) && rm -f /run/btput-bare.pids && " + portQuiet(3002)},
		{TputUnitSandboxed, r.bm2, "http://127.0.0.1:3003/",
			"systemctl start btput-sandboxed@0 btput-sandboxed@1 && " + wait("http://127.0.0.1:3003/"),
			"systemctl stop 'btput-sandboxed@*' && " + portQuiet(3003)},
		{TputUnitBare, r.bm2, "http://127.0.0.1:3004/",
			"systemctl start btput-plain@0 btput-plain@1 && " + wait("http://127.0.0.1:3004/"),
			"systemctl stop 'btput-plain@*' && " + portQuiet(3004)},
	}
}

// The throughput figure's controls.
const (
	TputBare          = "control: 2 bare reusePort processes + Node.js"
	TputUnitSandboxed = "control: hand-written units with bm2's sandbox + Node.js"
	TputUnitBare      = "control: hand-written units, no sandbox + Node.js"
)

// portQuiet waits until nothing listens on port.
func portQuiet(port int) string {
	return fmt.Sprintf("(for i in $(seq 100); do ss -Htln 'sport = :%d' | grep -q . || exit 0; sleep 0.1; done; exit 1)", port)
}

// tputUnit is the control's template unit (bench/phases.go's phaseUnit,
// both instances under one account, as bm2's are, for SO_REUSEPORT).
func tputUnit(port int, sandboxed bool) string {
	u := strings.ReplaceAll(phaseUnit(port, sandboxed), "DynamicUser=yes\n", "DynamicUser=yes\nUser=btput\nEnvironment=BM2_APP_INSTANCE=%i\n")
	return u
}

// throughput: each repetition starts each system with 2 instances, warms
// it up with wrk, runs wrk with keep-alive and with Connection: close (in
// alternating order), and stops it; the order of the systems rotates from
// one repetition to the next.
func (r *runner) throughput(ctx context.Context) error {
	s := r.s
	systems := r.tputSystems()
	for _, u := range []struct {
		name      string
		port      int
		sandboxed bool
	}{{"btput-sandboxed@.service", 3003, true}, {"btput-plain@.service", 3004, false}} {
		if err := r.bm2.WriteFile("/run/systemd/system/"+u.name, []byte(tputUnit(u.port, u.sandboxed)), 0o644); err != nil {
			return err
		}
	}
	if out, err := r.bm2.sh(ctx, "systemctl daemon-reload"); err != nil {
		return fmt.Errorf("throughput: %w\n%s", err, out)
	}
	r.record("throughput", tputUnit(3003, true)+"   # /run/systemd/system/btput-sandboxed@.service (btput-plain@.service: port 3004, the first 10 lines)")
	for _, sys := range systems {
		r.record("throughput", sys.start, sys.stop)
	}
	r.record("throughput",
		wrkCmd(s.WrkThreads, s.WrkConns, s.WrkWarmup, KeepAlive, "URL")+"   # warm-up, not counted",
		wrkCmd(s.WrkThreads, s.WrkConns, s.WrkDuration, KeepAlive, "URL"),
		wrkCmd(s.WrkThreads, s.WrkConns, s.WrkDuration, Close, "URL"))
	for rep := range s.TputReps {
		for k := range systems {
			sys := systems[(k+rep)%len(systems)]
			if out, err := sys.bed.sh(ctx, sys.start); err != nil {
				return fmt.Errorf("start %s: %w\n%s", sys.name, err, out)
			}
			if out, err := sys.bed.sh(ctx, wrkCmd(s.WrkThreads, s.WrkConns, s.WrkWarmup, KeepAlive, sys.url)); err != nil {
				return fmt.Errorf("warm up %s: %w\n%s", sys.name, err, out)
			}
			modes := []string{KeepAlive, Close}
			if rep%2 == 1 {
				modes = []string{Close, KeepAlive}
			}
			for _, mode := range modes {
				out, err := sys.bed.sh(ctx, wrkCmd(s.WrkThreads, s.WrkConns, s.WrkDuration, mode, sys.url))
				if err != nil {
					return fmt.Errorf("wrk %s: %w\n%s", sys.name, err, out)
				}
				w, err := parseWrk(out)
				if err != nil {
					return err
				}
				run := TputRun{Rep: rep, System: sys.name, Mode: mode, Wrk: w, RPS: w.RPS()}
				if sys.bed.kind == "pm2" {
					run.GodRSSKiB = r.godRSS(ctx)
				}
				r.res.Throughput = append(r.res.Throughput, run)
				r.logf("throughput %d/%d %-14s %-17s %8.0f req/s  p99 %5.1f ms  errors %d",
					rep+1, s.TputReps, sys.name, mode, w.RPS(), float64(w.P99Us)/1000, w.Errors())
			}
			if out, err := sys.bed.sh(ctx, sys.stop); err != nil {
				return fmt.Errorf("stop %s: %w\n%s", sys.name, err, out)
			}
		}
	}
	return nil
}

// godRSS returns the RSS of PM2's God daemon in the PM2 sandbox (KiB), or 0.
func (r *runner) godRSS(ctx context.Context) int64 {
	var ps []Proc
	if err := r.pm2.helper(ctx, "", &ps, "procs"); err != nil {
		return 0
	}
	if g := findGod(ps); g != nil {
		return g.RSSKiB
	}
	return 0
}

// findGod finds PM2's God daemon ("PM2 v7.0.4: God Daemon (/root/.pm2)").
func findGod(ps []Proc) *Proc {
	for i := range ps {
		if strings.Contains(ps[i].Cmdline, "God Daemon") {
			return &ps[i]
		}
	}
	return nil
}
