package control

import (
	"errors"
	"fmt"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/sysd"
)

// Code is the class of a failure: whose fault it is and what could fix
// it. Package cli maps it to the bm2 command's exit code; control only
// says which it is, so that what a command did and how the process ends
// are decided on their own sides of the line.
type Code int

const (
	// Inherit is the class of the error wrapped: an [Error] that only
	// brings a fix.
	Inherit Code = iota
	// Failed: the command failed (an instance did not come online,
	// systemd refused, ...).
	Failed
	// BadArg: the command line asked for what cannot be (a count out of
	// range, a file where a directory goes); cli reports it as a usage
	// error.
	BadArg
	// Invalid: an invalid project file, or a check that found a problem.
	Invalid
	// NoProject: no such project.
	NoProject
	// NoSystemd: systemd is not reachable.
	NoSystemd
)

// Error is a failure with its class and what the user can do about it.
// The outermost Fix in a chain is the one shown: the command that knows
// most of the context words it.
type Error struct {
	Code Code
	Fix  string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// fail gives err a class and a fix.
func fail(code Code, fix string, err error) error {
	return &Error{Code: code, Fix: fix, Err: err}
}

// withFix attaches a fix to err, keeping its class.
func withFix(err error, fix string) error {
	return &Error{Code: Inherit, Fix: fix, Err: err}
}

// badArg is an argument that cannot be: cli words its usage hint, as
// it knows the command.
func badArg(format string, args ...any) error {
	return &Error{Code: BadArg, Err: fmt.Errorf(format, args...)}
}

// FixOf is the outermost fix attached to err, "" when none is.
func FixOf(err error) string {
	var x *Error
	for e := err; errors.As(e, &x); e = x.Err {
		if x.Fix != "" {
			return x.Fix
		}
	}
	var r *registry.Refusal
	var m *registry.Missing
	var b *registry.Blocked
	switch {
	case errors.As(err, &r):
		return r.Hint
	case errors.As(err, &m):
		return m.Hint
	case errors.As(err, &b):
		return b.Hint
	}
	return ""
}

// CodeOf is the class of err: the outermost [Error]'s that has one, else
// what the error is (an unreachable systemd, an invalid or conflicting
// project file, one the registered projects refuse, a project that is not
// registered, a change the registry does not allow), else Failed. It is Inherit only for nil.
func CodeOf(err error) Code {
	if err == nil {
		return Inherit
	}
	var x *Error
	for e := err; errors.As(e, &x); e = x.Err {
		if x.Code != Inherit {
			return x.Code
		}
	}
	var refusal *registry.Refusal
	var missing *registry.Missing
	var blocked *registry.Blocked
	switch {
	case errors.As(err, &refusal):
		return Invalid
	case errors.As(err, &missing):
		return NoProject
	case errors.As(err, &blocked):
		return Failed
	case sysd.IsUnreachable(err):
		return NoSystemd
	case errors.Is(err, config.ErrConflict):
		return Invalid
	}
	var ce config.Errors
	var e1 *config.Error
	if errors.As(err, &ce) || errors.As(err, &e1) {
		return Invalid
	}
	return Failed
}
