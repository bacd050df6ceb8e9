package control

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/units"
)

// waiting is a command's waits on one connection to systemd: package
// wait's Driver on the scope's host (wait.Scope), the Reporter its words
// go to, and the words of a wait that failed (explain.Waits).
type waiting struct {
	sd     Systemd
	host   wait.Scope
	driver wait.Driver
	words  explain.Waits
}

// waitingOn is the scope's waits through sd.
func waitingOn(c *Client, sd Systemd) waiting {
	j := scopeJournal(&c.Env)
	host := wait.Scope{Systemd: sd, Layout: c.Scope().Layout(), Clock: c.Now, Verdict: c.ReadVerdict, Watch: c.WatchVerdicts,
		ReadJournal: c.ReadJournal, JournalUser: journalUser(c), Listen: c.Listening, RunError: j.FirstError}
	return waiting{
		sd:     sd,
		host:   host,
		driver: wait.Driver{Host: host, Clock: c.Clock, Poll: c.PollInterval, Report: reporterOf(c.Report)},
		words:  explain.Waits{Host: c.Explainer(), Journal: j, Tail: c.Journal, Units: sd.Units},
	}
}

// online watches instances ids of p until every one is online, printing
// a line as each comes online. Online means running with a main process
// that listens on the instance's port (or, when its sockets cannot be read,
// running for min_uptime_ms); a crash after that is the restart budget's
// business. In cluster mode an instance is done only when the reusePort
// probe has confirmed it too (a reuseport_confirmed event logged for its
// current run). An instance
// that fails or stops, or a project that becomes errored (the reusePort
// probe stopped it) ends the wait with an error naming the instance, its
// result and its last log lines; so does the timeout.
func (x waiting) online(ctx context.Context, p *config.Project, ids []int, timeout time.Duration, verb string) error {
	w := wait.New(wait.UntilOnline, p, ids, x.host.Now())
	timeout = orDefault(timeout)
	end, err := x.driver.Run(ctx, w, timeout)
	return x.failed(ctx, w, end, err, timeout, verb)
}

// reloadInstance restarts instance i and waits until it is back: online,
// listening again if it listened before, and (cluster mode) confirmed.
// before is its state as read just now (the run the restart replaces). It
// prints one line: "api-0 restarting… online, listening, confirmed (1.2s)".
func (x waiting) reloadInstance(ctx context.Context, p *config.Project, i int, before view.UnitStatus, timeout time.Duration) error {
	w := wait.New(wait.UntilBack, p, []int{i}, x.host.Now())
	// An instance that listened on its port must listen again before the
	// next one goes: a bind test cannot tell, as the port group
	// stays joinable while the other instances listen. (One that did not,
	// or whose sockets cannot be read, is not waited for: it may not be a
	// network service, or listen through a process bm2 cannot see.)
	wasListening, lerr := false, error(nil)
	if !p.IsWorker() { // a worker has no port
		wasListening, lerr = x.host.Listening(ctx, before, p.InstancePort(i))
	}
	w.Back(before, lerr == nil && wasListening)
	return x.restartAndWait(ctx, w, "restarting", timeout)
}

// restartAndWait restarts the one instance of an UntilBack wait (a fresh
// budget first) and waits until it is back, on one progress line that
// starts "<id> <doing>… ".
func (x waiting) restartAndWait(ctx context.Context, w *wait.Waiter, doing string, timeout time.Duration) error {
	unit := units.Instance(w.Project().Name, w.IDs()[0])
	timeout = orDefault(timeout)
	end, err := x.driver.RunBack(ctx, w, doing, func(ctx context.Context) error {
		if err := x.sd.ResetFailed(ctx, unit); err != nil {
			return err
		}
		return x.sd.Restart(ctx, unit)
	}, timeout)
	return x.failed(ctx, w, end, err, timeout, "reload")
}

// orDefault is timeout, or DefaultTimeout when none was given.
func orDefault(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return DefaultTimeout
	}
	return timeout
}

// failed is how a wait ended as the command's error: nil when it
// succeeded, err when a look failed or ctx ended, else the words of the
// failure (package explain).
func (x waiting) failed(ctx context.Context, w *wait.Waiter, end *wait.Ending, err error, timeout time.Duration, verb string) error {
	var f explain.Failure
	switch {
	case err != nil || end == nil:
		return err
	case end.TimedOut:
		f = x.words.TimedOut(ctx, w, end.Last, timeout, verb)
	default:
		f = x.words.Ended(ctx, w, end, verb)
	}
	if f.NotBack != "" {
		return &notBackError{err: f.Err, id: f.NotBack}
	}
	return fail(Failed, f.Fix, f.Err)
}

// notBackError is a restarted instance that did not come back: the
// reload stops there.
type notBackError struct {
	err error
	id  string // the instance, "api-1"
}

func (e *notBackError) Error() string { return e.err.Error() }
func (e *notBackError) Unwrap() error { return e.err }
