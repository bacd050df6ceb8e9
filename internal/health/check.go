package health

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Systemd is the part of systemd the health check talks to (*sysd.Conn).
type Systemd interface {
	sysd.Reader
	sysd.RestartQueuer
}

// CheckFunc makes the GETs of one run for the instances that run as id
// (nil: as this process, in user scope), each on its port, and returns
// what it found by index. An error that wraps ErrCheckNotMade means
// nothing was asked (the child did not start): those instances are not
// counted. Any other error comes with the results it could read (none,
// when the child's output was refused): the rest failed.
type CheckFunc func(ctx context.Context, id *identity.Identity, targets []Target, path string, timeout time.Duration) (map[int]Result, error)

// ErrCheckNotMade marks a check that was not made at all.
var ErrCheckNotMade = errors.New("the check was not made")

// Checker is one run of `bm2-probe health <project>`, the oneshot
// bm2-<project>-health.service: one check of every running instance of
// the project, the counts ([Step]) and the restarts. Its settings come
// from systemd, not from the project file: the service's own
// Environment= (BM2_HEALTH_PATH, BM2_HEALTH_INTERVAL_MS,
// BM2_HEALTH_TIMEOUT_MS, BM2_HEALTH_FAILURES) and each instance's
// BM2_HEALTH_PORT, UID and GID, so that what is checked is what runs.
type Checker struct {
	Project string
	Systemd Systemd
	Check   CheckFunc
	// Owner runs the instances when systemd does not say (user scope:
	// the user); nil in system scope.
	Owner   *identity.Identity
	Events  journal.Sink
	Crashes crashlog.Logs
	// Dir is the project's health directory (layout.Layout.HealthDir),
	// which holds the state file.
	Dir   string
	Now   func() time.Time
	Log   journal.Logf
	Grace time.Duration // StartGrace when 0
}

// checkSettings are the check's settings, as its service has them.
type checkSettings struct {
	path     string
	interval time.Duration
	timeout  time.Duration
	failures int
}

// settings reads the check's settings from its service's Environment=.
func (c *Checker) settings(ctx context.Context) (checkSettings, error) {
	unit := units.HealthService(c.Project)
	st, err := c.Systemd.Unit(ctx, unit)
	if err != nil {
		return checkSettings{}, err
	}
	var s checkSettings
	ms := func(name string) (time.Duration, bool) {
		n, err := strconv.ParseInt(st.Env(name), 10, 64)
		return time.Duration(n) * time.Millisecond, err == nil && n > 0
	}
	var ok1, ok2, ok3 bool
	s.path = st.Env("BM2_HEALTH_PATH")
	s.interval, ok1 = ms("BM2_HEALTH_INTERVAL_MS")
	s.timeout, ok2 = ms("BM2_HEALTH_TIMEOUT_MS")
	s.failures, err = strconv.Atoi(st.Env("BM2_HEALTH_FAILURES"))
	ok3 = err == nil && s.failures > 0
	if !strings.HasPrefix(s.path, "/") || !ok1 || !ok2 || !ok3 {
		return checkSettings{}, fmt.Errorf("%s has no health settings (BM2_HEALTH_PATH, BM2_HEALTH_INTERVAL_MS, BM2_HEALTH_TIMEOUT_MS, BM2_HEALTH_FAILURES): is it bm2-generator's? run daemon-reload", unit)
	}
	return s, nil
}

// instances lists the project's instance units systemd knows: those its
// target wants, in index order, and the surge of a reload while it is
// loaded and up.
func (c *Checker) instances(ctx context.Context) ([]string, error) {
	t, err := c.Systemd.Unit(ctx, units.Target(c.Project))
	if err != nil {
		return nil, err
	}
	var idx []int
	for _, w := range t.Wants {
		if p, i, ok := units.ParseInstance(w); ok && p == c.Project && i >= 0 {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	names := make([]string, 0, len(idx)+1)
	for _, i := range idx {
		names = append(names, units.Instance(c.Project, i))
	}
	// Asked for by name, the surge would be loaded from the bare template:
	// only when systemd has it loaded already.
	surge := units.Instance(c.Project, units.Surge)
	if l, err := c.Systemd.Loaded(ctx, []string{surge}); err == nil && len(l) == 1 && !l[0].Down() {
		names = append(names, surge)
	}
	return names, nil
}

// checked is one running instance the run checks.
type checked struct {
	index  int
	run    Run
	port   int
	id     *identity.Identity // nil: as this process
	gid    uint32
	status string // for the log line
}

// Run checks every running instance once, writes the state file, and
// restarts (alone) each instance whose run reached health_failures.
func (c *Checker) Run(ctx context.Context) error {
	s, err := c.settings(ctx)
	if err != nil {
		return err
	}
	names, err := c.instances(ctx)
	if err != nil {
		return err
	}
	sts, err := c.Systemd.Units(ctx, names)
	if err != nil {
		return err
	}
	var all []checked
	for k, st := range sts {
		_, index, _ := units.ParseInstance(names[k])
		id := units.InstanceID(c.Project, index)
		if !st.Running() || st.InvocationID == "" {
			continue // not up: nothing to ask
		}
		port, err := strconv.Atoi(st.Env("BM2_HEALTH_PORT"))
		if err != nil || port < 1 || port > 65535 || strconv.Itoa(port) != st.Env("BM2_HEALTH_PORT") {
			c.Log.Printf("%s: no BM2_HEALTH_PORT in its unit (started before the project had its check? `bm2 restart %s` gives it one): not checked", id, id)
			continue
		}
		ck := checked{index: index, port: port, gid: st.GID,
			run: Run{Instance: id, Invocation: st.InvocationID, Since: st.ActiveEnter}}
		switch {
		case c.Owner != nil:
			// User scope: the user's manager runs the instances as the
			// user, as it runs this process (and reports no UID for
			// them): the child is started as it is.
		case st.UID != sysd.NoID && st.GID != sysd.NoID:
			ck.id = &identity.Identity{UID: int(st.UID), GID: int(st.GID)}
		default:
			c.Log.Printf("%s: systemd reports no UID for it: not checked", id)
			continue
		}
		all = append(all, ck)
	}
	prev, err := Read(Path(c.Dir))
	if err != nil && !IsMissing(err) {
		c.Log.Printf("%v: starting the counts again", err)
	}
	prev.Project = c.Project
	at := c.Now()
	results, unmade, errs := c.checkAll(ctx, all, s)
	if err := ctx.Err(); err != nil {
		// Stopped (with the project) in the middle of the checks: what
		// they found is not the app's doing.
		return err
	}
	var runs []Run
	for _, ck := range all {
		if !unmade[ck.run.Instance] {
			runs = append(runs, ck.run)
		}
	}
	cfg := Config{Interval: s.interval, Failures: s.failures, Grace: c.Grace}
	next, restarts := Step(prev, runs, results, cfg, at)
	next.Instances = keepUnmade(next.Instances, prev, all, unmade)
	for _, r := range restarts {
		for _, ck := range all {
			if ck.run.Instance != r.Instance {
				continue
			}
			queued, err := c.restart(ctx, ck, r, s, at)
			errs = append(errs, err)
			if !queued {
				next = Unrestarted(next, r)
			}
		}
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		errs = append(errs, err)
	} else if err := Write(Path(c.Dir), next); err != nil {
		errs = append(errs, fmt.Errorf("write the health state: %w", err))
	}
	for _, e := range next.Instances {
		c.Log.Printf("%s: %s", e.Instance, describeEntry(e))
	}
	return errors.Join(errs...)
}

// checkAll checks the instances, one child per identity they run as
// (nearly always one: a project runs as one account). unmade names the
// instances whose check was not made.
func (c *Checker) checkAll(ctx context.Context, all []checked, s checkSettings) (map[string]Result, map[string]bool, []error) {
	results := map[string]Result{}
	unmade := map[string]bool{}
	var errs []error
	done := make([]bool, len(all))
	for k := range all {
		if done[k] {
			continue
		}
		var group []int
		for j := k; j < len(all); j++ {
			if !done[j] && sameIdentity(all[j].id, all[k].id) {
				group, done[j] = append(group, j), true
			}
		}
		targets := make([]Target, len(group))
		for n, j := range group {
			targets[n] = Target{Index: all[j].index, Port: all[j].port}
		}
		got, err := c.Check(ctx, all[k].id, targets, s.path, s.timeout)
		switch {
		case errors.Is(err, ErrCheckNotMade):
			errs = append(errs, err)
			for _, j := range group {
				unmade[all[j].run.Instance] = true
			}
			continue
		case err != nil:
			// The child ran: what it could not say counts as failed.
			c.Log.Printf("%v", err)
		}
		for _, j := range group {
			if r, ok := got[all[j].index]; ok {
				results[all[j].run.Instance] = r
			}
		}
	}
	return results, unmade, errs
}

func sameIdentity(a, b *identity.Identity) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.GID == b.GID
}

// keepUnmade puts back, in order, the entries of instances whose check
// was not made this time, as they were.
func keepUnmade(next []Entry, prev State, all []checked, unmade map[string]bool) []Entry {
	if len(unmade) == 0 {
		return next
	}
	out := make([]Entry, 0, len(all))
	k := 0
	for _, ck := range all {
		if !unmade[ck.run.Instance] {
			out = append(out, next[k])
			k++
			continue
		}
		if e, ok := prev.Of(ck.run.Instance, ck.run.Invocation); ok {
			out = append(out, e)
		}
	}
	return out
}

// describeEntry is an instance's line in the service's log: "healthy
// (200 in 3ms)", "unhealthy 2/3 (timeout)".
func describeEntry(e Entry) string {
	s := string(e.Status)
	if e.Status == Unhealthy {
		s += fmt.Sprintf(" %d/%d", e.Failures, e.Limit)
	}
	return fmt.Sprintf("%s (%s in %dms)", s, e.Last, e.LatencyMS)
}

// restart is the reaction to a run that reached health_failures: the
// event, a crash.log line, and a restart of that instance alone. A run
// that ended meanwhile (a crash, a restart by hand) is left alone: the
// new one is judged afresh.
//
// queued is false when the restart was not asked for because systemd
// could not be asked (the count is kept for the next check); a run that
// ended is as good as restarted.
func (c *Checker) restart(ctx context.Context, ck checked, r Restart, s checkSettings, at time.Time) (queued bool, err error) {
	unit := units.Instance(c.Project, ck.index)
	st, err := c.Systemd.Unit(ctx, unit)
	if err != nil {
		return false, err
	}
	if !st.Running() || st.InvocationID != r.Invocation {
		c.Log.Printf("%s: ended on its own since its last check: not restarted", r.Instance)
		return true, nil
	}
	what := fmt.Sprintf("GET %s on port %d: %s", s.path, ck.port, r.Last.Describe(s.timeout))
	ev := journal.Event{
		Kind: journal.InstanceUnhealthy, Project: c.Project, Instance: r.Instance, Invocation: r.Invocation,
		Port: ck.port, Reason: reason.Unhealthy,
		Message: fmt.Sprintf("%s failed %d health checks in a row (%s); restarting it", r.Instance, r.Failures, what),
		Detail: fmt.Sprintf("last result %s; health_failures = %d, every %s; the instance is restarted alone, its neighbours keep serving",
			r.Last, s.failures, config.FormatMS(s.interval)),
	}
	errs := []error{c.Events.Emit(ev)}
	crash := crashlog.Crash{Time: at, Reason: reason.Unhealthy, Detail: fmt.Sprintf("%s, %d times in a row", what, r.Failures)}
	werr := c.Crashes.AppendGroup(c.Project, r.Instance, crash, crashlog.LogGroup(ck.gid))
	errs = append(errs, journal.ReportWriteFailure(c.Events, c.Project, r.Instance, c.Crashes.Path(c.Project, r.Instance), werr,
		"its crash.log misses the line reason=unhealthy, which the journal has"))
	if err := c.Systemd.RestartQueued(ctx, unit); err != nil {
		return false, errors.Join(append(errs, fmt.Errorf("restart %s: %w", unit, err))...)
	}
	c.Log.Printf("%s: restarted (%s)", r.Instance, what)
	return true, errors.Join(errs...)
}
