package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
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
}

func (c reloadCase) url() string { return fmt.Sprintf("http://127.0.0.1:%d/", c.port) }

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

func (r *runner) reloadFigure(ctx context.Context, c reloadCase) error {
	s := r.s
	out, err := r.bm2.sh(ctx, "bm2 reload --help >/dev/null 2>&1; echo $?")
	bm2Has := err == nil && strings.TrimSpace(out) == "0"
	c.res.Bm2Available = bm2Has
	c.res.Bm2Check = "bm2 reload --help   # exit status " + strings.TrimSpace(out)
	bm2Start := "cd /srv/" + c.name + " && bm2 serve >/dev/null && " + probesDone
	pm2Start := fmt.Sprintf("cd /srv/bench && PORT=%d pm2 start app.js -i %d --name %s >/dev/null && (for i in $(seq 300); do curl -sf -o /dev/null %s && exit 0; sleep 0.1; done; exit 1)",
		c.port, c.instances, c.name, c.url())
	bm2Reload, pm2Reload := "bm2 reload "+c.name, "pm2 reload "+c.name
	section := c.name
	r.record(section, "bm2 reload --help >/dev/null   # exit status 0: the bm2 side runs",
		fmt.Sprintf("cat /srv/%s/bm2.toml   # name = %q, script = \"app.js\", runtime = \"node\", instances = %d, port = %d (cluster mode)", c.name, c.name, c.instances, c.port),
		bm2Start, pm2Start,
		"# each run, with RELOAD = "+bm2Reload+" | "+pm2Reload+", once with keep-alive and once with -H 'Connection: close':",
		reloadScript(s.WrkThreads, s.WrkConns, s.ReloadDur, KeepAlive, c.url(), "RELOAD"),
		"# settle between runs (not timed): bm2: "+probesDone+" && sleep 2   PM2: sleep 2")
	if !bm2Has {
		r.logf("%s: `bm2 reload` is not available (exit %s): measuring PM2 only", c.name, strings.TrimSpace(out))
	} else if out, err := r.bm2.sh(ctx, bm2Start); err != nil {
		return fmt.Errorf("bm2 serve: %w\n%s", err, out)
	}
	if out, err := r.pm2.sh(ctx, pm2Start); err != nil {
		return fmt.Errorf("pm2 start: %w\n%s", err, out)
	}
	for rep := range s.ReloadReps {
		for _, mode := range []string{KeepAlive, Close} {
			order := []string{"bm2", "pm2"}
			if rep%2 == 1 {
				order = []string{"pm2", "bm2"}
			}
			for _, sys := range order {
				b, cmd, settle := r.pm2, pm2Reload, "sleep 2"
				if sys == "bm2" {
					if !bm2Has {
						continue
					}
					b, cmd, settle = r.bm2, bm2Reload, probesDone+" && sleep 2"
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
				r.logf("%s %d/%d %s %-17s %d of %d requests failed; reload took %.0f ms (exit %d)",
					c.name, rep+1, s.ReloadReps, sys, mode, run.Failed, run.Wrk.Requests, run.ReloadMs, run.Exit)
				if out, err := b.sh(ctx, settle); err != nil {
					return fmt.Errorf("settle: %w\n%s", err, out)
				}
			}
		}
	}
	if bm2Has {
		r.bm2.sh(ctx, "bm2 delete "+c.name+" >/dev/null")
	}
	r.pm2.sh(ctx, "pm2 kill >/dev/null")
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
