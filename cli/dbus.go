package cli

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// connectTimeout bounds how long bm2 waits for the bus before it decides
// that systemd is not reachable.
const connectTimeout = 10 * time.Second

// ConnectSystemd connects to the system manager: over the system bus, or,
// as root when the bus daemon is not running, over systemd's private socket
// (/run/systemd/private), as systemctl does. An error means systemd is not
// reachable; [ExitCode] maps it to [ExitNoSystemd]. The connection lives
// as long as ctx (godbus closes it when ctx ends) or until Close.
func ConnectSystemd(ctx context.Context) (Systemd, error) {
	type result struct {
		conn *sddbus.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		conn, err := sddbus.NewSystemConnectionContext(ctx)
		if err != nil && os.Geteuid() == 0 {
			if c, perr := sddbus.NewSystemdConnectionContext(ctx); perr == nil {
				conn, err = c, nil
			}
		}
		ch <- result{conn, err}
	}()
	timer := time.NewTimer(connectTimeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, unreachable(fmt.Errorf("connect to the system bus: %w", r.err))
		}
		return &dbusSystemd{conn: r.conn}, nil
	case <-timer.C:
		go func() { // do not leak a connection that arrives late
			if r := <-ch; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, unreachable(fmt.Errorf("connect to the system bus: no answer within %s", connectTimeout))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dbusSystemd is [Systemd] over github.com/coreos/go-systemd/v22/dbus.
type dbusSystemd struct{ conn *sddbus.Conn }

func (s *dbusSystemd) Close() error {
	s.conn.Close()
	return nil
}

func (s *dbusSystemd) Reload(ctx context.Context) error {
	if err := s.conn.ReloadContext(ctx); err != nil {
		return dbusErr("reload systemd (daemon-reload)", err)
	}
	return nil
}

type jobFunc func(ctx context.Context, name, mode string, ch chan<- string) (int, error)

// job enqueues a job and waits for its result on JobRemoved.
func (s *dbusSystemd) job(ctx context.Context, verb, unit string, fn jobFunc) error {
	// Buffered: go-systemd blocks its signal dispatch until the result is
	// read, and we may stop reading when ctx ends.
	ch := make(chan string, 1)
	if _, err := fn(ctx, unit, "replace", ch); err != nil {
		if verb == "stop" && dbusErrorName(err) == "org.freedesktop.systemd1.NoSuchUnit" {
			return nil // not loaded: nothing runs
		}
		return dbusErr(verb+" "+unit, err)
	}
	select {
	case res := <-ch:
		switch res {
		case "done", "skipped":
			return nil
		case "dependency":
			return fmt.Errorf("%s %s: a unit it depends on failed (job result %q)", verb, unit, res)
		default:
			return fmt.Errorf("%s %s: job %s", verb, unit, res)
		}
	case <-ctx.Done():
		return fmt.Errorf("%s %s: waiting for the job: %w", verb, unit, ctx.Err())
	}
}

func (s *dbusSystemd) Start(ctx context.Context, unit string) error {
	return s.job(ctx, "start", unit, s.conn.StartUnitContext)
}

func (s *dbusSystemd) Stop(ctx context.Context, unit string) error {
	return s.job(ctx, "stop", unit, s.conn.StopUnitContext)
}

func (s *dbusSystemd) Restart(ctx context.Context, unit string) error {
	return s.job(ctx, "restart", unit, s.conn.RestartUnitContext)
}

func (s *dbusSystemd) ResetFailed(ctx context.Context, unit string) error {
	err := s.conn.ResetFailedUnitContext(ctx, unit)
	if err == nil || dbusErrorName(err) == "org.freedesktop.systemd1.NoSuchUnit" {
		return nil
	}
	return dbusErr("reset-failed "+unit, err)
}

func (s *dbusSystemd) Units(ctx context.Context, names []string) ([]UnitStatus, error) {
	out := make([]UnitStatus, 0, len(names))
	for _, name := range names {
		props, err := s.conn.GetUnitPropertiesContext(ctx, name)
		if err != nil {
			return nil, dbusErr("read the state of "+name, err)
		}
		u := UnitStatus{
			Name:             name,
			LoadState:        str(props["LoadState"]),
			ActiveState:      str(props["ActiveState"]),
			SubState:         str(props["SubState"]),
			NeedDaemonReload: boolean(props["NeedDaemonReload"]),
			ActiveEnter:      usec(props["ActiveEnterTimestamp"]),
			InvocationID:     invocation(props["InvocationID"]),
			MemoryCurrent:    Unknown,
			CPUUsageNSec:     Unknown,
		}
		// A unit systemd has no file for still has its type's interface,
		// but ask only for services: the other units bm2 reads are targets.
		if isService(name) {
			sp, err := s.conn.GetUnitTypePropertiesContext(ctx, name, "Service")
			if err != nil {
				return nil, dbusErr("read the service state of "+name, err)
			}
			u.Result = str(sp["Result"])
			u.MainPID = u32(sp["MainPID"])
			u.NRestarts = u32(sp["NRestarts"])
			u.ExecMainCode = i32(sp["ExecMainCode"])
			u.ExecMainStatus = i32(sp["ExecMainStatus"])
			u.ControlGroup = str(sp["ControlGroup"])
			if v, ok := sp["MemoryCurrent"].(uint64); ok {
				u.MemoryCurrent = v
			}
			if v, ok := sp["CPUUsageNSec"].(uint64); ok {
				u.CPUUsageNSec = v
			}
		}
		out = append(out, u)
	}
	return out, nil
}

func (s *dbusSystemd) Loaded(ctx context.Context, patterns []string) ([]UnitStatus, error) {
	list, err := s.conn.ListUnitsByPatternsContext(ctx, nil, patterns)
	if err != nil {
		return nil, dbusErr("list units", err)
	}
	out := make([]UnitStatus, 0, len(list))
	for _, u := range list {
		out = append(out, UnitStatus{
			Name: u.Name, LoadState: u.LoadState, ActiveState: u.ActiveState, SubState: u.SubState,
			MemoryCurrent: Unknown, CPUUsageNSec: Unknown,
		})
	}
	sortUnits(out)
	return out, nil
}

// invocation renders an InvocationID property (16 bytes) as hex, the way
// systemctl and the journal's _SYSTEMD_INVOCATION_ID show it.
func invocation(v any) string {
	b, _ := v.([]byte)
	for _, c := range b {
		if c != 0 {
			return hex.EncodeToString(b)
		}
	}
	return "" // never started
}

func isService(name string) bool {
	return len(name) > len(".service") && name[len(name)-len(".service"):] == ".service"
}

func str(v any) string   { s, _ := v.(string); return s }
func boolean(v any) bool { b, _ := v.(bool); return b }
func u32(v any) uint32   { n, _ := v.(uint32); return n }
func i32(v any) int32    { n, _ := v.(int32); return n }

// usec converts a systemd timestamp (microseconds since the epoch, 0 for
// never) to a time.
func usec(v any) time.Time {
	n, _ := v.(uint64)
	if n == 0 || n == Unknown {
		return time.Time{}
	}
	return time.UnixMicro(int64(n))
}

// dbusErrorName returns the D-Bus error name of err, or "".
func dbusErrorName(err error) string {
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

// dbusErr wraps a D-Bus failure with what bm2 was doing and, for the
// common refusals, what to do about it.
func dbusErr(what string, err error) error {
	switch dbusErrorName(err) {
	case "org.freedesktop.DBus.Error.AccessDenied",
		"org.freedesktop.DBus.Error.InteractiveAuthorizationRequired":
		return withHint(fmt.Errorf("%s: permission denied: %w", what, err),
			"managing system services needs root: run the command again with sudo")
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
