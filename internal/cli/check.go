package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/generator"
	"github.com/bm2dev/bm2/internal/analyze"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/notify"
	"github.com/bm2dev/bm2/internal/preflight"
	"github.com/bm2dev/bm2/internal/preload"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// check is `bm2 check [dir | file | name]`.
func (a *App) check(ctx context.Context, args []string, trustFile bool) error {
	p, label, origin, err := a.checkTarget(args)
	if err != nil {
		return err
	}
	var problems []string
	w := a.Out

	fmt.Fprintf(w, "config ok: %s\n", a.c.Summary(p))
	// What root would refuse to do on this file's word (package trust).
	v := a.c.Verdict(ctx, p, origin, trustFile)
	for _, r := range v.Refused {
		fmt.Fprintf(w, "refused: %s\n", r)
		problems = append(problems, r.Error())
	}
	orderOnly := !trustFile && !a.c.Scope().IsUser() && origin.UID != 0
	switch {
	case p.Notify.Webhook != "":
		fmt.Fprintf(w, "notify: webhook %s (level %s)%s\n", notify.RedactURL(p.Notify.Webhook), p.Notify.Level, control.WebhookNote(p.Notify))
	case p.PrivateUnread:
		fmt.Fprintf(w, "notify: unknown (%s is readable by root only)\n", config.PrivatePath(p.File))
	default:
		fmt.Fprintln(w, "notify: disabled")
	}
	if needs := p.Needs(); len(needs) > 0 {
		parts := make([]string, len(needs))
		for i, n := range needs {
			parts[i] = fmt.Sprintf("%s (%s)", n.Unit, n.How)
		}
		if orderOnly {
			fmt.Fprintf(w, "needs: %s: ordering only, a file root did not write starts no unit\n", strings.Join(parts, ", "))
		} else {
			fmt.Fprintf(w, "needs: %s\n", strings.Join(parts, ", "))
		}
	}
	if len(p.After) > 0 {
		fmt.Fprintf(w, "after: %s (ordering only)\n", strings.Join(p.After, ", "))
	}
	if p.HealthChecked() {
		fmt.Fprintf(w, "health: %s\n", p.HealthSummary())
	}
	if p.MemoryWatched() {
		fmt.Fprintf(w, "memory restart: %s\n", p.MemorySummary())
	}
	if p.RestartSchedule != "" {
		line, problem := a.scheduleCheck(ctx, p)
		fmt.Fprintln(w, line)
		if problem != "" {
			problems = append(problems, problem)
		}
	}
	if line := logsLine(p.Log); line != "" {
		fmt.Fprintln(w, line)
	}
	if p.RestartDelayMax > 0 {
		fmt.Fprintln(w, backoffLine(p, a.c.SystemdVersion(ctx)))
	}
	if p.ExposedSecrets {
		problems = append(problems, fmt.Sprintf("%s holds [env] or the webhook and every user can read it: move them to %s (mode 0600), or let `bm2 serve` or `bm2 migrate` do it",
			p.File, config.PrivatePath(p.File)))
	}

	problems = append(problems, a.checkPorts(ctx, w, p)...)
	if p.Mode == config.Cluster {
		fmt.Fprintln(w, reusePortLine(p))
	}

	fmt.Fprintln(w, a.fenceLine(p, nil))

	problems = append(problems, a.checkRuntimeOf(ctx, w, p, v.OK())...)

	// What else keeps an instance from starting, as its user sees it: a
	// problem when certain (serve refuses it), else a warning (serve
	// warns and goes ahead).
	for _, e := range explain.PreflightAll(ctx, a.c.Explainer(), p) {
		if !e.Certain() {
			fmt.Fprintf(w, "warning: %s: %s; %s; %s\n", e.Reason, e.Message, e.Unsure, e.FixLine())
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", e.Reason, e.Message)
		problems = append(problems, explain.ProblemText(e.Explained))
	}

	problems = append(problems, a.checkRegistered(ctx, w, p)...)

	if len(problems) > 0 {
		noun := "problem"
		if len(problems) > 1 {
			noun = "problems"
		}
		return fail(control.Invalid, "fix them and run `bm2 check` again",
			fmt.Errorf("check found %d %s in %s:\n  %s", len(problems), noun, label, strings.Join(problems, "\n  ")))
	}
	return nil
}

// scheduleCheck is what bm2 check says of restart_schedule: when it
// runs next, as systemd-analyze calendar computes it (config's subset
// took the expression already; systemd refusing it, or a schedule that
// never comes, is a problem):
//
//	restart schedule: Sun 04:00, next run Sun 2026-12-06 04:00:00 UTC (`bm2 reload api`, started by bm2-api-restart.timer)
func (a *App) scheduleCheck(ctx context.Context, p *config.Project) (line, problem string) {
	expr := p.RestartSchedule
	by := fmt.Sprintf(" (`bm2 reload %s`, started by %s)", p.Name, units.RestartTimer(p.Name))
	next, err := a.c.Calendar(ctx, expr)
	var refused *analyze.CalendarRefused
	switch {
	case errors.As(err, &refused):
		return fmt.Sprintf("restart schedule: %s: systemd-analyze calendar refuses it (%s)", expr, refused.Msg),
			fmt.Sprintf("restart_schedule %q: %v, though bm2 took it: please report it; meanwhile write the schedule in another form (bm2.toml(5) lists them)", expr, err)
	case errors.Is(err, analyze.ErrNotInstalled):
		return "restart schedule: " + expr + ", next run not computed (no systemd-analyze)" + by, ""
	case err != nil:
		return "restart schedule: " + expr + ", next run not computed (" + wording.OneLine(err) + ")" + by, ""
	case next == analyze.Never:
		return "restart schedule: " + expr + ", next run never" + by,
			fmt.Sprintf("restart_schedule %q never comes (again): systemd-analyze calendar finds no next run, so the project would never be reloaded; fix the date or remove the key", expr)
	}
	return "restart schedule: " + expr + ", next run " + next + by, ""
}

// reusePortLine is what bm2 check says of reusePort in cluster mode:
// whose it is to set (reuseport), and for "preload" what bm2 does.
func reusePortLine(p *config.Project) string {
	if !p.Preload() {
		return "reusePort set by the app (reuseport = \"app\"): it must listen with reusePort: true; the probe checks every start"
	}
	line := fmt.Sprintf("reusePort supplied by bm2 (reuseport = \"preload\"): %s loads %s with %s, which ", p.Runtime, preload.FileName, preload.Flag(p.Runtime))
	if p.Runtime == config.Bun {
		return line + fmt.Sprintf("gives Bun.serve reusePort: true on port %d; Bun's node:http ignores it (Express or Fastify on Bun cannot share the port); the probe checks every start", p.Port)
	}
	return line + fmt.Sprintf("adds reusePort: true to the app's listen on port %d; the probe checks every start", p.Port)
}

// reusePortSupplied is how status says that bm2 supplies reusePort.
const reusePortSupplied = "reusePort supplied by bm2 (preload)"

// checkPorts prints a line per port of p, as its user would see them
// (package preflight), and returns the problems: an exclusive listener
// that is not one of p's instances (what bm2 serve refuses).
func (a *App) checkPorts(ctx context.Context, w io.Writer, p *config.Project) []string {
	var problems []string
	s := preflight.SeePorts(ctx, a.c, p)
	if s.Worker {
		fmt.Fprintln(w, "ports: none (a worker: no port of its own, no probe, no gateway)")
		return nil
	}
	if len(s.Ports) == 0 {
		return nil
	}
	r := p.Ports()
	if s.AsSelf {
		fmt.Fprintf(w, "(ports checked as you, not as %s: run as root to tell whether %s can join a held port)\n", s.ID, s.ID)
	}
	if s.Err != nil {
		fmt.Fprintf(w, "ports %s: cannot probe: %v\n", r, s.Err)
		return append(problems, fmt.Sprintf("ports %s could not be probed: %v", r, s.Err))
	}
	for _, line := range portLines(s.Ports, s.States) {
		fmt.Fprintln(w, line)
	}
	for _, h := range s.Held {
		if line := h.Line(p); line != "" {
			fmt.Fprintln(w, line)
		}
		problems = append(problems, h.Problem(p, "`bm2 check`"))
	}
	return problems
}

// checkRuntimeOf prints what preflight.Runtime found of p's runtime
// (nothing asked when the file was refused: ok false) and returns the
// problems.
func (a *App) checkRuntimeOf(ctx context.Context, w io.Writer, p *config.Project, ok bool) []string {
	var problems []string
	rc, _ := preflight.Runtime(ctx, a.c, p, ok)
	switch {
	case !ok:
		fmt.Fprintln(w, "runtime: version not asked: the file was refused")
	case rc.OK() && rc.Unchecked != "":
		fmt.Fprintf(w, "runtime: %s (version not asked: %s)\n", rc.Path, rc.Unchecked)
	case rc.OK():
		fmt.Fprintf(w, "runtime: %s %s (>= %s)\n", rc.Path, rc.Version, rc.Floor)
	default:
		fmt.Fprintf(w, "runtime: %s\n", rc.Problem)
		if e, ok := reason.Explain(rc.Reason, reason.Facts{Project: p.Name, Runtime: string(p.Runtime), Detail: rc.Problem, Again: "`bm2 check`"}); ok {
			problems = append(problems, explain.ProblemText(e))
		} else {
			problems = append(problems, "runtime "+rc.Problem+": "+jsruntime.Advice(p.Runtime))
		}
	}
	return problems
}

// checkRegistered prints what stands in the way of registering p beside
// the projects already registered (preflight.Register) and returns the
// problems.
func (a *App) checkRegistered(ctx context.Context, w io.Writer, p *config.Project) []string {
	var problems []string
	r := preflight.Register(ctx, a.c, p)
	if err := r.Owner; err != nil {
		fmt.Fprintln(w, err.Error())
		problems = append(problems, err.Error()+" ("+control.FixOf(err)+")")
	}
	if err := r.Conflict; err != nil {
		fmt.Fprintln(w, err.Error())
		var ce *config.ConflictError
		if errors.As(err, &ce) {
			e, _ := reason.Explain(reason.PortConflict, reason.Facts{Project: p.Name, Detail: fmt.Sprintf("%s (registered in %s)", err, ce.HolderFile), Again: "`bm2 check`"})
			problems = append(problems, explain.ProblemText(e))
		} else {
			problems = append(problems, err.Error())
		}
	}
	if err := r.System; err != nil {
		fmt.Fprintln(w, err.Error())
		problems = append(problems, err.Error()+"; fix: "+control.FixOf(err))
	}
	return problems
}

// checkTarget resolves check's argument to a validated project, the
// file name to show and who speaks for the file.
func (a *App) checkTarget(args []string) (*config.Project, string, trust.Origin, error) {
	if len(args) == 0 {
		return preflight.Resolve(a.c, control.ProjectFileName, false, true)
	}
	return preflight.Resolve(a.c, args[0], true, true)
}

// describe is the wording bm2 check uses for a port's state.
func describe(s reuseport.PortState) string {
	switch s {
	case reuseport.Free:
		return "free"
	case reuseport.Shared:
		return "held by a shared listener (joinable)"
	case reuseport.Exclusive:
		return "held by an exclusive listener (cannot join)"
	case preflight.UnknownToOthers:
		return "held by a listener (whether the project's user can join it is not known)"
	}
	return s.String()
}

// portLines renders the ports part of bm2 check: one line for the whole
// range when every port is in the same state, one line per port otherwise.
func portLines(ports []int, states []reuseport.PortState) []string {
	same := true
	for _, s := range states[1:] {
		if s != states[0] {
			same = false
		}
	}
	if same {
		return []string{fmt.Sprintf("ports %d~%d: %s", ports[0], ports[len(ports)-1], describe(states[0]))}
	}
	lines := make([]string, len(ports))
	for i, p := range ports {
		lines[i] = fmt.Sprintf("port %d: %s", p, describe(states[i]))
	}
	return lines
}

// logsLine is check's line about the log keys, "" when none is set
// (journald's own rate limit applies, and level prefixes are ignored):
//
//	logs: at most 100 lines per 1000 ms per instance, which journald scales up with free disk space (4 times with 4 GiB free)
func logsLine(l config.Log) string {
	var parts []string
	switch {
	case l.Unlimited():
		parts = append(parts, "no rate limit: one instance may flood the journal and push its older entries out sooner, bm2's events included")
	case l.RateLimited():
		burst, interval := "journald's burst (RateLimitBurst=)", "journald's interval (RateLimitIntervalSec=)"
		if l.RateLimitBurst != nil {
			burst = strconv.Itoa(*l.RateLimitBurst)
		}
		if l.RateLimitInterval != nil {
			interval = strconv.FormatInt(l.RateLimitInterval.Milliseconds(), 10) + " ms"
		}
		parts = append(parts, fmt.Sprintf("at most %s lines per %s per instance, which journald scales up with free disk space (4 times with 4 GiB free)", burst, interval))
	}
	if l.LevelPrefix {
		parts = append(parts, "the app's <N> prefixes set its lines' priorities (log_level_prefix)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "logs: " + strings.Join(parts, "; ")
}

// backoffLine is check's line about restart_delay_max_ms on a systemd of
// version v (0: not known): the backoff the generator writes, or, before
// generator.BackoffVersion, that every restart waits restart_delay_ms (a
// warning, not a problem: the project runs):
//
//	restart backoff: from 250 ms to 15000 ms over 5 restarts in a row (RestartSteps=5, RestartMaxDelaySec=15000ms)
func backoffLine(p *config.Project, v int) string {
	first, last := p.RestartDelay.Milliseconds(), p.RestartDelayMax.Milliseconds()
	if generator.Backoff(v) {
		return fmt.Sprintf("restart backoff: from %d ms to %d ms over %d restarts in a row (RestartSteps=%d, RestartMaxDelaySec=%dms)",
			first, last, generator.RestartSteps, generator.RestartSteps, last)
	}
	host := fmt.Sprintf("this host has %d", v)
	if v == 0 {
		host = "this host's version is not known"
	}
	return fmt.Sprintf("restart backoff: warning: restart_delay_max_ms needs systemd %d (%s): every restart waits restart_delay_ms (%d ms)",
		generator.BackoffVersion, host, first)
}
