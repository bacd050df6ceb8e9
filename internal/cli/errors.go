package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/outfile"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
)

// Exit codes of the bm2 command, documented in bm2(1).
const (
	ExitOK        = 0 // success
	ExitFailure   = 1 // the command failed (an instance did not come online, systemd refused, ...)
	ExitUsage     = 2 // bad command line
	ExitInvalid   = 3 // invalid project file, or bm2 check found a problem
	ExitNoProject = 4 // no such project
	ExitNoSystemd = 5 // systemd is not reachable
)

// exitCodes is the exit code of each class of failure control reports:
// the numbers are the command's, documented in bm2(1), and control never
// sees them.
var exitCodes = map[control.Code]int{
	control.Inherit:   ExitOK,
	control.Failed:    ExitFailure,
	control.BadArg:    ExitUsage,
	control.Invalid:   ExitInvalid,
	control.NoProject: ExitNoProject,
	control.NoSystemd: ExitNoSystemd,
}

// ExitCode maps an error returned by Run to the documented exit code.
func ExitCode(err error) int { return exitCodes[control.CodeOf(err)] }

// fail gives err the class of a failure and a hint (what to do next).
func fail(code control.Code, hint string, err error) error {
	return &control.Error{Code: code, Fix: hint, Err: err}
}

// withHint attaches a hint to err, keeping its class.
func withHint(err error, hint string) error {
	return &control.Error{Code: control.Inherit, Fix: hint, Err: err}
}

// usageErr is a bad command line of cmd ("" for bm2's own flags), with
// the help that shows its usage as the hint.
func usageErr(cmd, format string, args ...any) error {
	return fail(control.BadArg, usageHint(cmd), fmt.Errorf(format, args...))
}

func usageHint(cmd string) string {
	if cmd != "" {
		return "run `bm2 " + cmd + " --help` for its usage"
	}
	return "run `bm2 --help` for the list of commands"
}

// ownUsage gives a bad argument control refused without a fix of its
// own the usage hint of cmd, the command whose argument it was.
func ownUsage(cmd string, err error) error {
	if control.CodeOf(err) == control.BadArg && control.FixOf(err) == "" {
		return withHint(err, usageHint(cmd))
	}
	return err
}

// hint returns the outermost hint attached to err, or a generic one for
// the error's class.
func hint(err error) string {
	if h := control.FixOf(err); h != "" {
		return h
	}
	var refused *outfile.Refusal
	if errors.As(err, &refused) {
		return refused.Fix
	}
	if sysd.IsDenied(err) {
		return "managing system services needs root: run the command again with sudo (or drop --system to manage your own projects, in user scope)"
	}
	if errors.Is(err, journal.ErrUserVolatile) {
		return journal.UserVolatileHint
	}
	if errors.Is(err, journal.ErrRestricted) {
		return journal.RestrictedHint
	}
	if errors.Is(err, journal.ErrNoJournalctl) {
		return "bm2 reads the journal with journalctl, from systemd; is it installed?"
	}
	switch ExitCode(err) {
	case ExitNoSystemd:
		switch {
		case sysd.Retried(err):
			// PID 1 is systemd: it did not answer for the whole window (a
			// re-exec or a bus restart that took longer, or a host too
			// loaded to answer), which is not the same as having none.
			return fmt.Sprintf("systemd runs here but did not answer for %s (re-executing, its bus restarting, or overloaded?); `systemctl is-system-running` says when it is back; then run the command again: it completes what is left",
				sysd.ReconnectWindow)
		case sysd.Booted():
			return "systemd is PID 1 here, but bm2 could not reach it: is dbus.service running (/run/dbus/system_bus_socket)? As root, bm2 also tries systemd's private socket, /run/systemd/private"
		}
		return "bm2 needs systemd as PID 1 and its system bus (/run/dbus/system_bus_socket); is this host booted with systemd?"
	case ExitNoProject:
		return "`bm2 list` shows the registered projects; `bm2 serve` in a project dir registers one"
	case ExitInvalid:
		var ce config.Errors
		var e1 *config.Error
		if errors.As(err, &ce) || errors.As(err, &e1) {
			// A broken project file: its errors name file, line and key.
			e, _ := reason.Explain(reason.ConfigInvalid, reason.Facts{})
			return string(reason.ConfigInvalid) + ": " + e.FixLine()
		}
		return "fix the project file, then run `bm2 check` on it again"
	}
	if errors.Is(err, context.Canceled) {
		return "interrupted; run the command again to finish"
	}
	return ""
}
