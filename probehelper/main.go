package probehelper

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/state"
	"github.com/bm2dev/bm2/units"
)

// Environment the generator's drop-in for bm2-probe@<project>-<i>.service sets.
const (
	EnvPort        = "BM2_APP_PORT"
	EnvInstances   = "BM2_INSTANCES"
	EnvUser        = "BM2_PROBE_USER"
	EnvGroup       = "BM2_PROBE_GROUP"
	EnvStopTimeout = "BM2_STOP_TIMEOUT_MS"
	EnvWebhook     = "BM2_NOTIFY_WEBHOOK"
	EnvNotifyLevel = "BM2_NOTIFY_LEVEL"
)

// Main is bm2-probe: `bm2-probe <project>-<i>`, run by
// bm2-probe@<project>-<i>.service after every start of the instance.
func Main(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: bm2-probe PROJECT-INDEX (as bm2-probe@PROJECT-INDEX.service runs it)")
	}
	project, index, ok := units.ParseInstance(args[0])
	if !ok {
		return fmt.Errorf("%q is not an instance name like api-0", args[0])
	}
	num := func(key string) (int, error) {
		n, err := strconv.Atoi(getenv(key))
		if err != nil {
			return 0, fmt.Errorf("%s=%q: %w (the generator's drop-in sets it; run systemctl daemon-reload)", key, getenv(key), err)
		}
		return n, nil
	}
	port, err := num(EnvPort)
	if err != nil {
		return err
	}
	instances, err := num(EnvInstances)
	if err != nil {
		return err
	}
	stopMS, err := num(EnvStopTimeout)
	if err != nil {
		return err
	}
	uid, gid, err := lookupIDs(getenv(EnvUser), getenv(EnvGroup))
	if err != nil {
		return err
	}
	bus, err := Dial(ctx)
	if err != nil {
		return err
	}
	defer bus.Close()
	p := &Probe{
		Project: project, Index: index, Instances: instances, Port: port, UID: uid, GID: gid,
		Interval: DefaultInterval, Window: DefaultWindow,
		Systemd: bus, Clock: MonotonicClock{}, Check: CheckPortAs,
		Events:  journal.Journald{Fallback: os.Stderr},
		Crashes: journal.CrashLog{Dir: journal.DefaultLogDir},
		State:   state.Default,
	}
	if url := getenv(EnvWebhook); url != "" {
		p.Notifier = journal.Webhook{URL: url, MinLevel: getenv(EnvNotifyLevel)}
	}
	// Stopping waits for SIGTERM, then SIGKILL after stop_timeout_ms.
	runCtx, cancel := context.WithTimeout(ctx, DefaultWindow+time.Duration(stopMS)*time.Millisecond+30*time.Second)
	defer cancel()
	start := time.Now()
	outcome, err := p.Run(runCtx)
	fmt.Fprintf(out, "%s port %d: %s after %v\n", units.InstanceID(project, index), port, outcome, time.Since(start).Round(time.Millisecond))
	return err
}

// lookupIDs resolves the app's user (name or number) and optional group.
func lookupIDs(userName, groupName string) (uid, gid int, err error) {
	if userName == "" {
		return 0, 0, fmt.Errorf("%s is not set (the generator's drop-in sets it; run systemctl daemon-reload)", EnvUser)
	}
	u, err := user.Lookup(userName)
	if err != nil {
		if u, err = user.LookupId(userName); err != nil {
			return 0, 0, fmt.Errorf("the app's user %q: %w", userName, err)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	if groupName != "" {
		g, err := user.LookupGroup(groupName)
		if err != nil {
			if g, err = user.LookupGroupId(groupName); err != nil {
				return 0, 0, fmt.Errorf("the app's group %q: %w", groupName, err)
			}
		}
		gid, _ = strconv.Atoi(g.Gid)
	}
	return uid, gid, nil
}
