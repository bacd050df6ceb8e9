package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CrashRun is one kill -9 of an instance.
type CrashRun struct {
	Rep    int         `json:"rep"`
	System string      `json:"system"`
	Victim int         `json:"victim_pid"`
	Result CrashResult `json:"result"`
	// bm2 only: when the journal saw each step, in ms after the kill.
	Steps map[string]float64 `json:"steps_ms,omitempty"`
}

// crashSteps are the journal messages of an instance's restart, in order.
var crashSteps = []struct{ name, prefix string }{
	{"systemd saw the exit", "Main process exited"},
	{"instance_crashed event (ExecStopPost=bm2-probe exited)", "BM2_EVENT=instance_crashed"},
	{"unit failed (ExecStopPost done; RestartSec= starts)", "Failed with result"},
	{"restart scheduled (RestartSec= elapsed)", "Scheduled restart job"},
	{"process started (ExecStart=bm2-probe run: floor check, execve)", "Started "},
	{"app listening", "listening on "},
}

// bm2Steps reads when the journal saw each step of instance i's restart
// after a kill at killAtUs.
func (r *runner) bm2Steps(ctx context.Context, i int, killAtUs int64) map[string]float64 {
	out, _, err := r.bm2.Exec(ctx, "journalctl", "--no-pager", "-o", "json", "-u", fmt.Sprintf("bm2@crash-%d.service", i),
		"--since", fmt.Sprintf("@%d", killAtUs/1_000_000))
	if err != nil {
		return nil
	}
	steps := map[string]float64{}
	for _, l := range strings.Split(out, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		msg, _ := e["MESSAGE"].(string)
		if ev, _ := e["BM2_EVENT"].(string); ev != "" {
			msg = "BM2_EVENT=" + ev
		}
		tsStr, _ := e["__REALTIME_TIMESTAMP"].(string)
		ts, _ := strconv.ParseInt(tsStr, 10, 64)
		if ts < killAtUs {
			continue
		}
		for _, st := range crashSteps {
			if _, seen := steps[st.name]; !seen && strings.Contains(msg, st.prefix) {
				steps[st.name] = float64(ts-killAtUs) / 1000
			}
		}
	}
	return steps
}

const crashURL = "http://127.0.0.1:3200/"

// crash: 2 cluster-mode instances under each manager; each repetition
// SIGKILLs one of them (alternately the first and the second) and polls the
// shared port on fresh connections until a process that did not exist
// before answers. bm2 and PM2 alternate; between kills each side settles
// (bm2: the new instance is active and its probe finished; both: 1.5 s, so
// that no restart counts as unstable).
func (r *runner) crash(ctx context.Context) error {
	bm2Start := "cd /srv/crash && bm2 serve >/dev/null && " + probesDone
	pm2Start := fmt.Sprintf("cd /srv/bench && PORT=3200 pm2 start app.js -i 2 --name crash >/dev/null && (for i in $(seq 300); do curl -sf -o /dev/null %s && exit 0; sleep 0.1; done; exit 1)", crashURL)
	bm2PIDs := "systemctl show -P MainPID bm2@crash-0.service bm2@crash-1.service"
	r.record("crash", bm2Start, bm2PIDs,
		"bench-helper _helper crash -pid <one of them> -old <both> -url "+crashURL+"   # SIGKILL, then poll every 2 ms until a new pid answers",
		"systemctl is-active bm2@crash-<i>.service && "+probesDone+" && sleep 1.5   # settle (not timed)",
		pm2Start, "pm2 jlist   # worker pids",
		"bench-helper _helper crash -pid <one worker> -old <both> -url "+crashURL,
		"sleep 1.5   # settle (not timed)")
	if out, err := r.bm2.sh(ctx, bm2Start); err != nil {
		return fmt.Errorf("bm2 serve: %w\n%s", err, out)
	}
	if out, err := r.pm2.sh(ctx, pm2Start); err != nil {
		return fmt.Errorf("pm2 start: %w\n%s", err, out)
	}
	for rep := range r.s.CrashReps {
		order := []string{"bm2", "pm2"}
		if rep%2 == 1 {
			order = []string{"pm2", "bm2"}
		}
		for _, sys := range order {
			var b *bed
			var pids []int
			switch sys {
			case "bm2":
				b = r.bm2
				out, err := b.sh(ctx, bm2PIDs)
				if err != nil {
					return fmt.Errorf("%w\n%s", err, out)
				}
				for _, f := range strings.Fields(out) {
					if n, _ := strconv.Atoi(f); n > 0 {
						pids = append(pids, n)
					}
				}
			case "pm2":
				b = r.pm2
				out, err := b.sh(ctx, "pm2 jlist")
				if err != nil {
					return fmt.Errorf("%w\n%s", err, out)
				}
				if i := strings.IndexByte(out, '['); i > 0 {
					out = out[i:]
				}
				var ps []pm2Proc
				if err := json.Unmarshal([]byte(out), &ps); err != nil {
					return fmt.Errorf("pm2 jlist: %w", err)
				}
				for _, p := range ps {
					if p.Name == "crash" && p.PID > 0 && p.PM2Env.Status == "online" {
						pids = append(pids, p.PID)
					}
				}
			}
			if len(pids) != 2 {
				return fmt.Errorf("%s: want 2 running instances, found pids %v", sys, pids)
			}
			victim := pids[rep%2]
			var old []string
			for _, p := range pids {
				old = append(old, strconv.Itoa(p))
			}
			run := CrashRun{Rep: rep, System: sys, Victim: victim}
			if err := b.helper(ctx, "", &run.Result, "crash", "-pid", strconv.Itoa(victim), "-old", strings.Join(old, ","), "-url", crashURL); err != nil {
				return err
			}
			if sys == "bm2" {
				run.Steps = r.bm2Steps(ctx, rep%2, run.Result.KillAtUs)
			}
			r.res.Crash = append(r.res.Crash, run)
			r.logf("crash %d/%d %s: a new process answered %.0f ms after kill -9 (%d requests meanwhile: %d failed, %d unanswered)",
				rep+1, r.s.CrashReps, sys, ms(run.Result.RecoverUs), run.Result.Polls, run.Result.Failed, run.Result.Hung)
			settle := "sleep 1.5"
			if sys == "bm2" {
				settle = fmt.Sprintf("for i in $(seq 100); do systemctl is-active -q bm2@crash-%d.service && break; sleep 0.1; done; %s && sleep 1.5", rep%2, probesDone)
			}
			if out, err := b.sh(ctx, settle); err != nil {
				return fmt.Errorf("settle: %w\n%s", err, out)
			}
		}
	}
	r.bm2.sh(ctx, "bm2 delete crash >/dev/null")
	r.pm2.sh(ctx, "pm2 kill >/dev/null")
	// The same for bm2 with restart_delay_ms = 0 (project crash0, port
	// 3210): what systemd's own restart path costs without the delay.
	if err := r.crashVariant(ctx, "crash0", 3210, "bm2-delay0", "restart_delay_ms = 0"); err != nil {
		return err
	}
	// And with every crash notified to a webhook that never answers
	// (project crashhang, port 3220): a restart must not wait for it.
	r.record("crash", hangStart+"   # the webhook of crashhang, which never answers", hangStop+"   # afterwards")
	if out, err := r.bm2.sh(ctx, hangStart); err != nil {
		return fmt.Errorf("the hanging receiver: %w\n%s", err, out)
	}
	defer r.bm2.sh(context.WithoutCancel(ctx), hangStop)
	return r.crashVariant(ctx, "crashhang", 3220, "bm2-hangnotify", "[notify] level = \"warning\", webhook = "+hangURL+" (never answers)")
}

// crashVariant is the crash figure's bm2 side again, for another project
// of 2 instances on port; its runs are recorded as system.
func (r *runner) crashVariant(ctx context.Context, project string, port int, system, what string) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	start := "cd /srv/" + project + " && bm2 serve >/dev/null && " + probesDone
	pidsCmd := fmt.Sprintf("systemctl show -P MainPID bm2@%[1]s-0.service bm2@%[1]s-1.service", project)
	r.record("crash", start, "bench-helper _helper crash -pid <one of them> -old <both> -url "+url+"   # "+what)
	if out, err := r.bm2.sh(ctx, start); err != nil {
		return fmt.Errorf("bm2 serve %s: %w\n%s", project, err, out)
	}
	for rep := range r.s.CrashReps {
		out, err := r.bm2.sh(ctx, pidsCmd)
		if err != nil {
			return fmt.Errorf("%w\n%s", err, out)
		}
		var pids []int
		for _, f := range strings.Fields(out) {
			if n, _ := strconv.Atoi(f); n > 0 {
				pids = append(pids, n)
			}
		}
		if len(pids) != 2 {
			return fmt.Errorf("%s: want 2 running instances, found pids %v", project, pids)
		}
		victim := pids[rep%2]
		old := []string{strconv.Itoa(pids[0]), strconv.Itoa(pids[1])}
		run := CrashRun{Rep: rep, System: system, Victim: victim}
		if err := r.bm2.helper(ctx, "", &run.Result, "crash", "-pid", strconv.Itoa(victim), "-old", strings.Join(old, ","), "-url", url); err != nil {
			return err
		}
		r.res.Crash = append(r.res.Crash, run)
		r.logf("crash %d/%d bm2 %s: a new process answered %.0f ms after kill -9 (%d requests meanwhile: %d failed, %d unanswered)",
			rep+1, r.s.CrashReps, what, ms(run.Result.RecoverUs), run.Result.Polls, run.Result.Failed, run.Result.Hung)
		settle := fmt.Sprintf("for i in $(seq 100); do systemctl is-active -q bm2@%s-%d.service && break; sleep 0.1; done; %s && sleep 1.5", project, rep%2, probesDone)
		if out, err := r.bm2.sh(ctx, settle); err != nil {
			return fmt.Errorf("settle: %w\n%s", err, out)
		}
	}
	_, err := r.bm2.sh(ctx, "bm2 stop "+project+" >/dev/null")
	return err
}
