package sysd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// ConnectTimeout bounds how long a connection attempt waits before it
// decides that systemd is not reachable.
const ConnectTimeout = 10 * time.Second

// Conn is a connection to systemd's manager.
type Conn struct {
	c *sddbus.Conn
}

// Connect connects to the system manager over the system bus, or, as
// root when the bus daemon is not running, over systemd's private socket,
// as systemctl does. An error means systemd is not reachable
// ([IsUnreachable]). The connection lives as long as ctx (godbus closes it
// when ctx ends) or until Close.
func Connect(ctx context.Context) (*Conn, error) {
	return dial(ctx, "the system bus", func(ctx context.Context) (*sddbus.Conn, error) {
		conn, err := sddbus.NewSystemConnectionContext(ctx)
		if err != nil && os.Geteuid() == 0 {
			if c, perr := sddbus.NewSystemdConnectionContext(ctx); perr == nil {
				return c, nil
			}
		}
		return conn, err
	})
}

// ConnectPrivate connects to systemd's private socket, /run/systemd/private:
// root only, no bus daemon, no environment.
func ConnectPrivate(ctx context.Context) (*Conn, error) {
	return dial(ctx, "systemd's private socket", sddbus.NewSystemdConnectionContext)
}

// ConnectUser connects to a user's own manager (systemd --user) through
// its private socket, $XDG_RUNTIME_DIR/systemd/private: systemd's own
// socket, which needs no bus daemon (so no dbus-user-session package) and
// no environment. Only the user (and root) may connect to it.
func ConnectUser(ctx context.Context, socket string) (*Conn, error) {
	if _, err := os.Stat(socket); err != nil {
		return nil, unreachable(fmt.Errorf("your systemd user manager is not running (no %s)", socket))
	}
	return dial(ctx, "your systemd user manager ("+socket+")", func(ctx context.Context) (*sddbus.Conn, error) {
		return sddbus.NewConnection(func() (*dbus.Conn, error) {
			conn, err := dbus.Dial("unix:path="+socket, dbus.WithContext(ctx))
			if err != nil {
				return nil, err
			}
			// EXTERNAL with the uid, as systemctl does; no Hello on a
			// private socket.
			if err := conn.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Geteuid()))}); err != nil {
				conn.Close()
				return nil, err
			}
			return conn, nil
		})
	})
}

func dial(ctx context.Context, what string, connect func(context.Context) (*sddbus.Conn, error)) (*Conn, error) {
	type result struct {
		conn *sddbus.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := connect(ctx)
		ch <- result{c, err}
	}()
	timer := time.NewTimer(ConnectTimeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, unreachable(fmt.Errorf("connect to %s: %w", what, r.err))
		}
		return &Conn{c: r.conn}, nil
	case <-timer.C:
		go func() { // do not leak a connection that arrives late
			if r := <-ch; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, unreachable(fmt.Errorf("connect to %s: no answer within %s", what, ConnectTimeout))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close releases the connection.
func (c *Conn) Close() error {
	c.c.Close()
	return nil
}

// Reload is `systemctl daemon-reload`: generators run again and unit files
// are re-read. It returns when the reload is complete.
func (c *Conn) Reload(ctx context.Context) error {
	if err := c.c.ReloadContext(ctx); err != nil {
		return mapErr("reload systemd (daemon-reload)", err)
	}
	return nil
}

type jobFunc func(ctx context.Context, name, mode string, ch chan<- string) (int, error)

// job enqueues a job in "replace" mode and waits for its result.
func (c *Conn) job(ctx context.Context, verb, unit string, fn jobFunc) error {
	ch, err := c.enqueue(ctx, verb, unit, fn)
	if err != nil || ch == nil {
		return err
	}
	return wait(ctx, verb, unit, ch)
}

func (c *Conn) enqueue(ctx context.Context, verb, unit string, fn jobFunc) (<-chan string, error) {
	// Buffered: go-systemd blocks its signal dispatch until the result is
	// read, and the caller may stop reading when ctx ends.
	ch := make(chan string, 1)
	if _, err := fn(ctx, unit, "replace", ch); err != nil {
		if verb == "stop" && IsNoSuchUnit(err) {
			return nil, nil // not loaded: nothing runs
		}
		return nil, mapErr(verb+" "+unit, err)
	}
	return ch, nil
}

func wait(ctx context.Context, verb, unit string, ch <-chan string) error {
	select {
	case res := <-ch:
		if res == "done" || res == "skipped" {
			return nil
		}
		return &JobError{Verb: verb, Unit: unit, Result: res}
	case <-ctx.Done():
		return fmt.Errorf("%s %s: waiting for the job: %w", verb, unit, ctx.Err())
	}
}

// JobError is a job that did not end "done" (or "skipped").
type JobError struct {
	Verb, Unit string
	Result     string // canceled, timeout, failed, dependency, ...
}

func (e *JobError) Error() string {
	if e.Result == "dependency" {
		return fmt.Sprintf("%s %s: a unit it depends on failed (job result %q)", e.Verb, e.Unit, e.Result)
	}
	return fmt.Sprintf("%s %s: job %s", e.Verb, e.Unit, e.Result)
}

// Start starts a unit and waits for the job to finish.
func (c *Conn) Start(ctx context.Context, unit string) error {
	return c.job(ctx, "start", unit, c.c.StartUnitContext)
}

// Stop stops a unit and waits; stopping a unit systemd has not loaded is
// not an error.
func (c *Conn) Stop(ctx context.Context, unit string) error {
	return c.job(ctx, "stop", unit, c.c.StopUnitContext)
}

// Restart restarts a unit and waits.
func (c *Conn) Restart(ctx context.Context, unit string) error {
	return c.job(ctx, "restart", unit, c.c.RestartUnitContext)
}

// StopAll queues a stop job for every unit at once, then waits for all of
// them, reporting every failure.
func (c *Conn) StopAll(ctx context.Context, units ...string) error {
	var errs []error
	type pending struct {
		unit string
		ch   <-chan string
	}
	var jobs []pending
	for _, u := range units {
		ch, err := c.enqueue(ctx, "stop", u, c.c.StopUnitContext)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ch != nil {
			jobs = append(jobs, pending{u, ch})
		}
	}
	for _, j := range jobs {
		errs = append(errs, wait(ctx, "stop", j.unit, j.ch))
	}
	return errors.Join(errs...)
}

// ResetFailed is `systemctl reset-failed UNIT`: it forgets a failed state
// and the start-limit counter. A unit systemd does not know is not an
// error.
func (c *Conn) ResetFailed(ctx context.Context, unit string) error {
	err := c.c.ResetFailedUnitContext(ctx, unit)
	if err == nil || IsNoSuchUnit(err) {
		return nil
	}
	return mapErr("reset-failed "+unit, err)
}

// Units reports the state of each named unit, in the order given. Units
// systemd does not know come back with LoadState "not-found".
func (c *Conn) Units(ctx context.Context, names []string) ([]Status, error) {
	out := make([]Status, 0, len(names))
	for _, name := range names {
		s, err := c.Unit(ctx, name)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Unit reports the state of one unit.
func (c *Conn) Unit(ctx context.Context, name string) (Status, error) {
	props, err := c.c.GetUnitPropertiesContext(ctx, name)
	if err != nil {
		return Status{}, mapErr("read the state of "+name, err)
	}
	s := Status{Name: name, MemoryCurrent: Unknown, CPUUsageNSec: Unknown, UID: NoID, GID: NoID}
	s.fill(props)
	// A unit systemd has no file for still has its type's interface, but
	// ask only services: the other units bm2 reads are targets and slices.
	if IsService(name) {
		sp, err := c.c.GetUnitTypePropertiesContext(ctx, name, "Service")
		if err != nil {
			return Status{}, mapErr("read the service state of "+name, err)
		}
		s.fillService(sp)
	}
	return s, nil
}

// Loaded lists the units systemd currently has loaded whose names match
// any of the glob patterns (e.g. "bm2@api-*.service"), sorted by name.
// Only Name, LoadState, ActiveState and SubState are filled in.
func (c *Conn) Loaded(ctx context.Context, patterns []string) ([]Status, error) {
	list, err := c.c.ListUnitsByPatternsContext(ctx, nil, patterns)
	if err != nil {
		return nil, mapErr("list units", err)
	}
	out := make([]Status, 0, len(list))
	for _, u := range list {
		out = append(out, Status{
			Name: u.Name, LoadState: u.LoadState, ActiveState: u.ActiveState, SubState: u.SubState,
			MemoryCurrent: Unknown, CPUUsageNSec: Unknown, UID: NoID, GID: NoID,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Error names of systemd's and the bus's refusals.
const (
	errNoSuchUnit = "org.freedesktop.systemd1.NoSuchUnit"
)

// errorName returns the D-Bus error name of err, or "".
func errorName(err error) string {
	var v dbus.Error
	if errors.As(err, &v) {
		return v.Name
	}
	var p *dbus.Error
	if errors.As(err, &p) && p != nil {
		return p.Name
	}
	return ""
}

// IsNoSuchUnit tells whether systemd answered that it has no such unit.
func IsNoSuchUnit(err error) bool { return errorName(err) == errNoSuchUnit }

// DeniedError is a request the caller is not allowed to make (polkit or
// the bus said no): managing system services needs root.
type DeniedError struct{ err error }

func (e *DeniedError) Error() string { return e.err.Error() }
func (e *DeniedError) Unwrap() error { return e.err }

// UnreachableError means systemd could not be reached at all, as opposed
// to systemd refusing or failing a request.
type UnreachableError struct{ err error }

func (e *UnreachableError) Error() string { return "systemd is not reachable: " + e.err.Error() }
func (e *UnreachableError) Unwrap() error { return e.err }

func unreachable(err error) error { return &UnreachableError{err: err} }

// Unreachable marks err as systemd not being reachable (for fakes).
func Unreachable(err error) error { return unreachable(err) }

// IsUnreachable tells whether err means systemd could not be reached.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// IsDenied tells whether err is a refusal for lack of privilege.
func IsDenied(err error) bool {
	var d *DeniedError
	return errors.As(err, &d)
}

// mapErr wraps a D-Bus failure with what bm2 was doing, classifying the
// refusals and the lost connections.
func mapErr(what string, err error) error {
	switch errorName(err) {
	case "org.freedesktop.DBus.Error.AccessDenied",
		"org.freedesktop.DBus.Error.InteractiveAuthorizationRequired":
		return &DeniedError{err: fmt.Errorf("%s: permission denied: %w", what, err)}
	case "org.freedesktop.DBus.Error.ServiceUnknown",
		"org.freedesktop.DBus.Error.NoReply",
		"org.freedesktop.DBus.Error.Disconnected":
		return unreachable(fmt.Errorf("%s: %w", what, err))
	}
	if errors.Is(err, dbus.ErrClosed) {
		return unreachable(fmt.Errorf("%s: %w", what, err))
	}
	return fmt.Errorf("%s: %w", what, err)
}
