package probehelper

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/state"
	"github.com/bm2dev/bm2/units"
)

// Main is bm2-probe: `bm2-probe <project>-<i>`, run by
// bm2-probe@<project>-<i>.service after every start of the instance.
//
// It takes what it checks from what systemd actually runs — the instance's
// BM2_APP_PORT, User= and Group= — so a project file edited without a
// daemon-reload cannot make it probe the wrong port or as the wrong user;
// only the notification settings come from the project file.
func Main(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: bm2-probe PROJECT-INDEX (as bm2-probe@PROJECT-INDEX.service runs it)")
	}
	project, index, ok := units.ParseInstance(args[0])
	if !ok {
		return fmt.Errorf("%q is not an instance name like api-0", args[0])
	}
	bus, err := Dial(ctx)
	if err != nil {
		return err
	}
	defer bus.Close()
	unit := units.Instance(project, index)
	run, err := bus.Running(ctx, unit)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(run.Env["BM2_APP_PORT"])
	if err != nil {
		return fmt.Errorf("%s has no BM2_APP_PORT (is it a bm2 instance? run systemctl daemon-reload)", unit)
	}
	uid, gid, err := lookupIDs(run.User, run.Group)
	if err != nil {
		return err
	}
	instances, err := bus.Instances(ctx, project)
	if err != nil || instances == 0 {
		instances = index + 1
	}
	p := &Probe{
		Project: project, Index: index, Instances: instances, Port: port, UID: uid, GID: gid,
		Interval: DefaultInterval, Window: DefaultWindow,
		Systemd: bus, Clock: MonotonicClock{}, Check: CheckPortAs,
		Events:  journal.Journald{Fallback: os.Stderr},
		Crashes: journal.CrashLog{Dir: journal.DefaultLogDir},
		State:   state.Default,
	}
	if n := notifySettings(project, getenv); n.Webhook != "" {
		p.Notifier = journal.Webhook{URL: n.Webhook, MinLevel: string(n.Level)}
	}
	// Stopping waits for SIGTERM, then SIGKILL after each instance's TimeoutStopSec.
	runCtx, cancel := context.WithTimeout(ctx, DefaultWindow+run.StopTimeout+30*time.Second)
	defer cancel()
	start := time.Now()
	outcome, err := p.Run(runCtx)
	fmt.Fprintf(out, "%s port %d: %s after %v\n", units.InstanceID(project, index), port, outcome, time.Since(start).Round(time.Millisecond))
	return err
}

// notifySettings reads the project's [notify] table from its file on the
// search path; a missing or broken file means no notification.
func notifySettings(project string, getenv func(string) string) config.Notify {
	found := config.Discover(config.SearchPath(getenv))
	for _, src := range found.Sources {
		if src.Name() == project {
			if p, err := config.Parse(src.Path, src.Data, 1); err == nil {
				return p.Notify
			}
		}
	}
	return config.Notify{}
}

// lookupIDs resolves the app's user (name or number; "" is root, as for
// systemd) and optional group.
func lookupIDs(userName, groupName string) (uid, gid int, err error) {
	if userName == "" {
		userName = "root"
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

// envMap turns systemd's Environment= list into a map.
func envMap(list []string) map[string]string {
	m := make(map[string]string, len(list))
	for _, kv := range list {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
