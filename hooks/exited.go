package hooks

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// ExitInfo is what systemd tells ExecStopPost= about the main process:
// $SERVICE_RESULT, $EXIT_CODE and $EXIT_STATUS (systemd.exec(5)).
type ExitInfo struct {
	Result string // success, exit-code, signal, core-dump, timeout, watchdog, oom-kill, …
	Code   string // exited, killed, dumped
	Status string // exit status number or signal name (without SIG)
}

// Abnormal reports whether the exit was a crash rather than a requested
// stop or a clean exit.
func (x ExitInfo) Abnormal() bool { return x.Result != "" && x.Result != "success" }

// Crash turns an abnormal exit into a crash.log line.
func (x ExitInfo) Crash(at time.Time) journal.Crash {
	c := journal.Crash{Time: at, Reason: x.Result}
	switch x.Code {
	case "exited":
		if n, err := strconv.Atoi(x.Status); err == nil {
			c.ExitCode = &n
			if n == ExitRuntimeRejected {
				c.Reason = "runtime_rejected"
			}
		}
	case "killed", "dumped":
		c.Signal = "SIG" + x.Status
	}
	switch x.Result {
	case "exit-code":
		if c.Reason == "exit-code" {
			c.Reason = "exited"
		}
	case "signal":
		c.Reason = "killed"
	case "core-dump":
		c.Reason = "core_dumped"
	case "timeout":
		c.Reason = "timeout"
	case "oom-kill":
		c.Reason = "oom_killed"
	}
	return c
}

// Exited is `bm2-probe exited <project>-<i>`, run as ExecStopPost=+ after
// every stop of the instance. Clean stops leave no trace; abnormal exits
// get a crash.log line and an instance_crashed event.
func Exited(id string, x ExitInfo, now time.Time, crashes journal.CrashLog, events journal.Sink) error {
	project, _, ok := units.ParseInstance(id)
	if !ok {
		return fmt.Errorf("%q is not an instance name like api-0", id)
	}
	if !x.Abnormal() {
		return nil
	}
	c := x.Crash(now)
	how := fmt.Sprintf("exited with status %s", x.Status)
	if c.Signal != "" {
		how = "killed by " + c.Signal
	} else if x.Result == "timeout" {
		how = "timed out"
	}
	err1 := crashes.Append(project, id, c)
	fields := map[string]string{"BM2_SERVICE_RESULT": x.Result}
	if c.ExitCode != nil {
		fields["BM2_EXIT_STATUS"] = x.Status
	}
	if c.Signal != "" {
		fields["BM2_SIGNAL"] = c.Signal
	}
	err2 := events.Emit(journal.Event{
		Kind: journal.InstanceCrashed, Project: project, Instance: id, Reason: c.Reason,
		Message: fmt.Sprintf("%s %s (%s)", id, how, x.Result), Fields: fields,
	})
	if err1 != nil {
		return err1
	}
	return err2
}
