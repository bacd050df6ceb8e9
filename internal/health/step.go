package health

import "time"

// StartGrace is how long a run that has not answered healthy yet is
// starting rather than failing, from the moment systemd had it running:
// the reusePort probe's window, in which an app is expected to listen. A
// run that answers healthy once is past it at once; one that never does
// counts its failures from then on, so an app that never answers is
// restarted after StartGrace and health_failures intervals.
const StartGrace = 60 * time.Second

// Config is what Step needs of the project's check.
type Config struct {
	Interval time.Duration // health_interval_ms
	Failures int           // health_failures
	// Grace is StartGrace unless set (tests).
	Grace time.Duration
}

// Run is one running instance, as systemd says it runs now.
type Run struct {
	Instance   string    // "api-0"
	Invocation string    // its InvocationID
	Since      time.Time // when it became active (ActiveEnterTimestamp)
}

// Restart is an instance to restart: its run reached health_failures.
type Restart struct {
	Instance, Invocation string
	Last                 Result // the last failed check
	Failures             int    // how many in a row
}

// minSpacing is how much of the interval must lie between two counted
// failures: the timer's runs are an interval apart (to 100 ms), the
// extra runs of a waiting bm2 serve may come at any time and count
// nothing.
func (c Config) minSpacing() time.Duration { return c.Interval * 3 / 4 }

// Step is one run of the health service: the state before, the
// instances systemd runs now (in the order the state file lists them),
// what their checks found (an instance without a result failed: its
// check gave none) and when the checks started. It returns the new state,
// which holds exactly the instances of runs, and the ones to restart.
func Step(prev State, runs []Run, results map[string]Result, cfg Config, at time.Time) (State, []Restart) {
	grace := cfg.Grace
	if grace == 0 {
		grace = StartGrace
	}
	next := State{Version: StateVersion, Project: prev.Project, Instances: make([]Entry, 0, len(runs))}
	var restarts []Restart
	for _, run := range runs {
		e, ok := prev.Of(run.Instance, run.Invocation)
		if !ok {
			// A new run (or the first check of this one): from zero.
			e = Entry{Instance: run.Instance, Invocation: run.Invocation, Status: Starting, First: at}
		}
		if e.First.IsZero() {
			e.First = at // an entry of an older state file: from now
		}
		since := run.Since
		if since.IsZero() {
			// systemd did not say when it started: the grace runs from
			// its first check, not from 1970 (which would skip it).
			since = e.First
			if since.IsZero() {
				since = at
			}
		}
		e.Limit = cfg.Failures
		r, ok := results[run.Instance]
		if !ok {
			r = Result{Failure: Failed}
		}
		e.Last, e.LatencyMS, e.Checked = r.String(), r.Latency.Milliseconds(), at
		if r.Answered() {
			e.Answered = at
		}
		switch {
		case r.Healthy():
			e.Status, e.Failures, e.Healthy, e.Counted = Healthy, 0, at, time.Time{}
		case e.Healthy.IsZero() && at.Sub(since) < grace:
			e.Status = Starting // not listening yet, or warming up
		case !e.Counted.IsZero() && at.Sub(e.Counted) < cfg.minSpacing():
			// Too soon after the last counted failure: an extra run.
		default:
			e.Status, e.Failures, e.Counted = Unhealthy, e.Failures+1, at
			if e.Failures >= cfg.Failures {
				// The count starts again from 0 only once the restart is
				// asked for: Unrestarted puts it back when asking failed.
				restarts = append(restarts, Restart{Instance: run.Instance, Invocation: run.Invocation, Last: r, Failures: e.Failures})
				e.Failures, e.Restarted = 0, at
			}
		}
		next.Instances = append(next.Instances, e)
	}
	return next, restarts
}

// Unrestarted puts back the count of r's run in s, whose restart could not
// be asked for (systemd did not take the job): the next failed check
// restarts it, rather than health_failures more.
func Unrestarted(s State, r Restart) State {
	for k, e := range s.Instances {
		if e.Instance == r.Instance && e.Invocation == r.Invocation {
			s.Instances[k].Failures, s.Instances[k].Restarted = r.Failures, time.Time{}
		}
	}
	return s
}
