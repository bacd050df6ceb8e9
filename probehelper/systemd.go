package probehelper

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bm2dev/bm2/units"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"golang.org/x/sys/unix"
)

// Bus is Systemd over systemd's D-Bus API.
type Bus struct {
	Conn *sddbus.Conn
}

// Dial connects to the system manager (root's D-Bus or its private socket).
func Dial(ctx context.Context) (*Bus, error) {
	conn, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to systemd: %w", err)
	}
	return &Bus{Conn: conn}, nil
}

// Close closes the connection.
func (b *Bus) Close() { b.Conn.Close() }

// Instance reads ActiveState, SubState, Job, InvocationID and
// ActiveEnterTimestampMonotonic of a unit.
func (b *Bus) Instance(ctx context.Context, unit string) (Instance, error) {
	props, err := b.Conn.GetUnitPropertiesContext(ctx, unit)
	if err != nil {
		return Instance{}, err
	}
	active, _ := props["ActiveState"].(string)
	sub, _ := props["SubState"].(string)
	var inst Instance
	switch {
	case active == "active" && sub == "running":
		inst.Online = true
	case active == "inactive" || active == "failed":
		inst.Gone = !hasJob(props["Job"])
	}
	if id, ok := props["InvocationID"].([]byte); ok {
		inst.Invocation = hex.EncodeToString(id)
	}
	if ts, ok := props["ActiveEnterTimestampMonotonic"].(uint64); ok {
		inst.OnlineAt = time.Duration(ts) * time.Microsecond
	}
	return inst, nil
}

// hasJob reads the (id, path) struct of the Job property.
func hasJob(v any) bool {
	if s, ok := v.([]any); ok && len(s) == 2 {
		if id, ok := s[0].(uint32); ok {
			return id != 0
		}
	}
	return false
}

// Stop queues a stop job for every unit ("replace" mode) and waits until
// all of them finish or ctx ends.
func (b *Bus) Stop(ctx context.Context, units ...string) error {
	var errs []error
	chans := make([]chan string, 0, len(units))
	names := make([]string, 0, len(units))
	for _, u := range units {
		ch := make(chan string, 1)
		if _, err := b.Conn.StopUnitContext(ctx, u, "replace", ch); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", u, err))
			continue
		}
		chans = append(chans, ch)
		names = append(names, u)
	}
	for i, ch := range chans {
		select {
		case res := <-ch:
			if res != "done" {
				errs = append(errs, fmt.Errorf("stop %s: job %s", names[i], res))
			}
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("stop %s: %w", names[i], ctx.Err()))
		}
	}
	return errors.Join(errs...)
}

// MonotonicClock is CLOCK_MONOTONIC, the clock of systemd's *Monotonic
// timestamps.
type MonotonicClock struct{}

func (MonotonicClock) Now() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // cannot fail on Linux
	}
	return time.Duration(ts.Nano())
}

func (MonotonicClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Running is what an instance runs with, as systemd sees it.
type Running struct {
	Env         map[string]string // Environment=
	User, Group string
	StopTimeout time.Duration // TimeoutStopUSec
}

// Running reads the instance's Service properties.
func (b *Bus) Running(ctx context.Context, unit string) (Running, error) {
	props, err := b.Conn.GetUnitTypePropertiesContext(ctx, unit, "Service")
	if err != nil {
		return Running{}, fmt.Errorf("%s: %w", unit, err)
	}
	var r Running
	env, _ := props["Environment"].([]string)
	r.Env = envMap(env)
	r.User, _ = props["User"].(string)
	r.Group, _ = props["Group"].(string)
	if us, ok := props["TimeoutStopUSec"].(uint64); ok && us < uint64(time.Hour/time.Microsecond) {
		r.StopTimeout = time.Duration(us) * time.Microsecond
	}
	return r, nil
}

// Instances counts the instances the project's target wants.
func (b *Bus) Instances(ctx context.Context, project string) (int, error) {
	props, err := b.Conn.GetUnitPropertiesContext(ctx, units.Target(project))
	if err != nil {
		return 0, err
	}
	wants, _ := props["Wants"].([]string)
	n := 0
	for _, w := range wants {
		if p, _, ok := units.ParseInstance(w); ok && p == project && strings.HasPrefix(w, "bm2@") {
			n++
		}
	}
	return n, nil
}
