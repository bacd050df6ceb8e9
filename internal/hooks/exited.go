package hooks

import (
	"context"
	"errors"
	"fmt"
	"github.com/bm2dev/bm2/internal/portfence"
	"os"
	"os/user"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/confine"
	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/envfile"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Systemd is what the hooks ask systemd: the state of one unit, and a
// reset of its restart budget.
type Systemd interface {
	sysd.UnitReader
	sysd.Resetter
}

// ReadOnce is sd with each unit read at most once: the exit hook's two
// halves (Exited, PortBlocked) judge the same moment, and the hook runs
// on the restart path, where every read is two calls PID 1 answers
// between the exit and the restart.
func ReadOnce(sd Systemd) Systemd { return &readOnce{Systemd: sd, read: map[string]sysd.Status{}} }

type readOnce struct {
	Systemd
	read map[string]sysd.Status
}

func (r *readOnce) Unit(ctx context.Context, name string) (sysd.Status, error) {
	if st, ok := r.read[name]; ok {
		return st, nil
	}
	st, err := r.Systemd.Unit(ctx, name)
	if err == nil {
		r.read[name] = st
	}
	return st, err
}

// How a main process ended (ExecMainCode, from waitid(2)).
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// Verifier explains an exit with status ExitRefused from what the root
// side can check itself (see VerifyRefusal); a reason that is not a
// refusal means there was nothing to refuse, and no reason ("") that the
// failure hook judges it (Later).
type Verifier func(ctx context.Context, st sysd.Status) (reason.Reason, string)

// Later is the exit hook's Verifier for what it does not judge itself:
// asking the runtime takes a transient unit, which under load can outlast
// TimeoutStopSec= (it bounds ExecStopPost=, 1.6 s by default). Exit status
// 78 is never restarted (RestartPreventExitStatus=), so the unit fails and
// its OnFailure= unit, off the stop path, judges the refusal (Failed).
func Later(context.Context, sysd.Status) (reason.Reason, string) { return "", "" }

// Crash turns how a run ended into a crash.log line.
func Crash(st sysd.Status, at time.Time) crashlog.Crash {
	c := crashlog.Crash{Time: at, Reason: reason.OfResult(st.Result)}
	switch st.ExecMainCode {
	case cldExited:
		n := int(st.ExecMainStatus)
		c.ExitCode = &n
	case cldKilled, cldDumped:
		c.Signal = unix.SignalName(syscall.Signal(st.ExecMainStatus))
	}
	return c
}

// Exited is `bm2-probe exited <project>-<i>`, the instance's
// ExecStopPost=+, run as root after every stop. It takes nothing from its
// environment: how the run ended comes from systemd over D-Bus (Result,
// ExecMainCode, ExecMainStatus), never from $SERVICE_RESULT. A clean stop
// leaves no trace but a fresh restart budget for the next start; an
// abnormal exit gets a crash.log line and an instance_crashed event, and a
// refusal (exit status 78, confirmed by verify) a runtime_rejected event.
func Exited(ctx context.Context, id string, sd Systemd, now time.Time, crashes crashlog.Logs, events journal.Sink, verify Verifier) error {
	project, index, ok := units.ParseInstance(id)
	if !ok {
		return fmt.Errorf("%q is not an instance name like api-0", id)
	}
	st, err := sd.Unit(ctx, units.Instance(project, index))
	if err != nil {
		return err
	}
	if st.Result == "" || st.Result == "success" {
		// A clean stop (bm2 stop, a restart job, a target stopped at
		// shutdown) ends the run without a crash: the next start, by hand
		// or at boot, gets a fresh restart budget. (Never after a crash:
		// the reset would make systemd forget it and not restart.)
		// Best effort: a failed reset must not fail the stop (the unit
		// would be "failed" and recorded as an instance that gave up).
		if err := sd.ResetFailed(ctx, units.Instance(project, index)); err != nil {
			fmt.Fprintf(os.Stderr, "%s: reset the restart budget after a clean stop: %v\n", id, err)
		}
		return nil
	}
	c := Crash(st, now)
	ev := journal.Event{
		Kind: journal.InstanceCrashed, Project: project, Instance: id,
		Invocation: st.InvocationID, ServiceResult: st.Result, Signal: c.Signal,
	}
	how := "exited with status " + strconv.Itoa(int(st.ExecMainStatus))
	switch {
	case c.Signal != "":
		how = "killed by " + c.Signal
	case st.Result == "timeout":
		how = "timed out"
	}
	if c.ExitCode != nil {
		ev.ExitStatus = strconv.Itoa(*c.ExitCode)
	}
	if st.ExecMainCode == cldExited && st.ExecMainStatus == ExitRefused {
		why, msg := verify(ctx, st)
		if why == "" {
			return nil // the failure hook judges it (Later)
		}
		return recordRefusal(crashes, events, id, st, now, why, msg)
	}
	if st.ExecMainCode == cldExited {
		if r := reason.OfSpawn(int(st.ExecMainStatus)); r != "" {
			// systemd could not start the process at all.
			e, _ := reason.Explain(r, reason.Facts{Project: project, Instance: id, Detail: spawnDetail(r, st)})
			c.Reason, c.Detail = r, e.Message
			ev.Reason, ev.Message, ev.Detail = r, e.Message, e.Fix
			return record(crashes, events, project, id, st.GID, c, ev)
		}
	}
	ev.Reason = c.Reason
	ev.Message = fmt.Sprintf("%s %s (%s)", id, how, st.Result)
	if port := DeniedBind(units.Instance(project, index)); port != 0 {
		// What the fence saw is the likeliest cause: an app that listens
		// where it chooses, not where bm2 says (the commonest shape reads
		// PORT and falls back to 3000).
		c.Detail = DeniedText(port, st.Env("BM2_APP_PORT"))
		ev.Message += "; " + c.Detail
		ev.Detail = c.Detail
	}
	return record(crashes, events, project, id, st.GID, c, ev)
}

// recordRefusal records a run that ended with exit status 78 as judged
// (why, msg): runtime_rejected for a refusal, instance_crashed for an app
// that exited with 78 itself.
func recordRefusal(crashes crashlog.Logs, events journal.Sink, id string, st sysd.Status, now time.Time, why reason.Reason, msg string) error {
	project, _, _ := units.ParseInstance(id)
	c := Crash(st, now)
	ev := journal.Event{
		Kind: journal.InstanceCrashed, Project: project, Instance: id,
		Invocation: st.InvocationID, ServiceResult: st.Result, ExitStatus: strconv.Itoa(ExitRefused),
		Reason: c.Reason, Message: fmt.Sprintf("%s exited with status %d (%s) (%s)", id, ExitRefused, msg, st.Result),
	}
	if why.Refusal() {
		c.Reason, c.Detail = why, msg
		ev.Kind, ev.Reason = journal.RuntimeRejected, why
		ev.Message = fmt.Sprintf("%s not started: %s", id, msg)
	}
	return record(crashes, events, project, id, st.GID, c, ev)
}

// DeniedBind is the port of the last bind bm2's port fence denied the
// run of unit that just ended, 0 for none: the exit hook runs in the
// unit's cgroup, where the fence is attached, and reads the fence's map
// (package portfence), which only the fence writes.
var DeniedBind = func(unit string) int {
	dir, err := portfence.SelfUnitDir(unit)
	if err != nil {
		return 0
	}
	port, _ := portfence.DeniedPort(dir)
	return port
}

// DeniedText says what a denied bind to port means and what to do, for
// an instance whose own port is own (BM2_APP_PORT; "" for a worker).
func DeniedText(port int, own string) string {
	if own == "" {
		return fmt.Sprintf("its bind to port %d was denied: a worker (no port in bm2.toml) may bind no port of its own; "+
			"set port = %d in bm2.toml if it serves there (it then gets it in PORT with port_env = [\"PORT\"]), or [sandbox] extra_ports = [%d]", port, port, port)
	}
	return fmt.Sprintf("its bind to port %d was denied: bm2 gives it port %s (in BM2_APP_PORT) and its port fence allows no other; "+
		"if the app reads PORT, add port_env = [\"PORT\"] to bm2.toml; or listen on process.env.BM2_APP_PORT; "+
		"or, if it needs port %d too, [sandbox] extra_ports = [%d]", port, own, port, port)
}

// spawnDetail is the {detail} of a spawn reason (reason.OfSpawn): the directory systemd
// could not enter, the user it could not find.
func spawnDetail(r reason.Reason, st sysd.Status) string {
	if r == reason.UserMissing {
		return st.User
	}
	return fmt.Sprintf("%s does not exist or cannot be entered by the app's user (systemd: exit status %d/CHDIR)", st.WorkingDirectory, st.ExecMainStatus)
}

// PortHolder names who holds port besides uid's sockets, when someone
// does: "python3 (pid 812), uid 65534 (nobody)".
type PortHolder func(port int, uid uint32) (who string, ok bool)

// PortBlocked is the second half of the exit hook: an instance that
// failed (not a clean stop, not a refusal) while a process of another
// user holds its port cannot listen there however often it restarts
// (SO_REUSEPORT joins only sockets of one user, so such a listener is
// never joinable). That instance, and only it, is marked errored with
// port_in_use (state.Dir.SetInstanceErrored, under /run: a reboot looks
// again), which keeps it from starting again (its own
// ConditionPathExists=), with an instance_errored event and a crash.log
// line naming the holder; its neighbours keep serving and restarting (any
// local user can listen on a port: a squatter must not stop a project).
// The instance's port and UID come from systemd; the holder's name and
// pid only go into the message and the mark.
func PortBlocked(ctx context.Context, id string, sd Systemd, now time.Time, sdir state.Dir, crashes crashlog.Logs, events journal.Sink, holder PortHolder) error {
	project, index, ok := units.ParseInstance(id)
	if !ok || holder == nil {
		return nil
	}
	st, err := sd.Unit(ctx, units.Instance(project, index))
	if err != nil {
		return err
	}
	if euid := os.Geteuid(); euid != 0 && st.UID == sysd.NoID {
		// User scope: the user's manager runs the app as the user (no
		// User=, so systemd reports no UID), and this hook as well.
		st.UID = uint32(euid)
	}
	switch {
	case st.Result == "" || st.Result == "success", st.UID == sysd.NoID,
		st.ExecMainCode == cldExited && (st.ExecMainStatus == ExitRefused || reason.OfSpawn(int(st.ExecMainStatus)) != ""):
		return nil
	}
	port, err := strconv.Atoi(st.Env("BM2_APP_PORT"))
	if err != nil {
		return nil
	}
	who, held := holder(port, st.UID)
	if !held {
		return nil
	}
	who = reason.Clean(who)
	first, err := sdir.SetInstanceErrored(id, state.Mark{Reason: string(reason.PortInUse), Detail: who})
	if err != nil {
		// Without the mark nothing keeps the instance down: it goes
		// through its restart budget, as any crash does, and gives up.
		return journal.ReportWriteFailure(events, project, id, sdir.InstanceErroredPath(id), err,
			fmt.Sprintf("port %d is held by %s, but nothing keeps %s from starting again: it restarts within its restart budget", port, who, id))
	}
	if !first {
		return nil
	}
	e, _ := reason.Explain(reason.PortInUse, reason.Facts{Project: project, Instance: id, Port: port, Detail: who})
	e.Message += "; bm2 keeps " + id + " from starting again until `bm2 start " + id + "` (or the next boot); its neighbours keep serving"
	c := crashlog.Crash{Time: now, Reason: reason.PortInUse, Detail: e.Message}
	return record(crashes, events, project, id, st.GID, c, journal.Event{
		Kind: journal.InstanceErrored, Project: project, Instance: id, Invocation: st.InvocationID, Port: port,
		Reason: reason.PortInUse, Message: e.Message, Detail: e.Fix, ServiceResult: st.Result,
	})
}

// ForeignHolder is the PortHolder of the real system: the TCP listeners
// on port (sock_diag) whose owner is not uid, named with the process that
// holds the socket when /proc shows one (the hook is root).
func ForeignHolder(port int, uid uint32) (string, bool) {
	ls, err := sockdiag.Listeners(port)
	if err != nil {
		return "", false
	}
	l, ok := Blocking(ls, uid)
	if !ok {
		return "", false
	}
	name := fmt.Sprintf("uid %d", l.UID)
	if u, err := user.LookupId(strconv.Itoa(int(l.UID))); err == nil {
		name += " (" + u.Username + ")"
	}
	if pid, pname, ok := sockdiag.OwnerOf(l); ok {
		return fmt.Sprintf("%s (pid %d), %s", reason.Clean(pname), pid, name), true
	}
	return "a process of " + name, true
}

// Blocking picks, among the listeners on a port, one of another user
// than uid that keeps uid's app from listening there, and only when none
// of uid's own sockets listens on it: while the app's own instances
// listen (cluster mode), it can listen too, and a foreign listener is not
// why it ended. A foreign listener counts when it holds an IPv4 address
// or the IPv6 wildcard: those conflict with the app's wildcard bind
// (0.0.0.0, or [::] dual-stack). One on a specific IPv6 address (::1) may
// sit beside an app on 0.0.0.0, and is not taken for the cause: the
// instance then goes through its restart budget as any crash does.
func Blocking(ls []sockdiag.Listener, uid uint32) (sockdiag.Listener, bool) {
	var found *sockdiag.Listener
	for i, l := range ls {
		switch {
		case l.UID == uid:
			return sockdiag.Listener{}, false
		case found == nil && (l.Family == unix.AF_INET || l.Addr.IsUnspecified()):
			found = &ls[i]
		}
	}
	if found == nil {
		return sockdiag.Listener{}, false
	}
	return *found, true
}

// record appends the crash.log line, giving the log to the group the run
// had (st.GID: the app's account's, so that it can read how it died;
// never a dynamic user's, see crashlog.LogGroup), and emits the event. A
// line that cannot be written (a full /var/log) is said
// (state_write_failed) after the event, and is no failure of the hook's:
// the event has the line's facts, and a failing ExecStopPost= or
// OnFailure= unit would only add a vaguer record of the same.
func record(crashes crashlog.Logs, events journal.Sink, project, id string, gid uint32, c crashlog.Crash, ev journal.Event) error {
	werr := crashes.AppendGroup(project, id, c, crashlog.LogGroup(gid))
	return errors.Join(events.Emit(ev),
		journal.ReportWriteFailure(events, project, id, crashes.Path(project, id), werr,
			fmt.Sprintf("its crash.log misses the line reason=%s, which the journal has", c.Reason)))
}

// Confined runs `<path> --version` on behalf of the instance st: as its
// account and inside its sandbox, never in the hook's own context (see
// ConfinedVersion).
type Confined func(ctx context.Context, st sysd.Status, path string) (string, error)

// VerifyRefusal is VerifyRefusalWith(ConfinedVersion): the exit hook's.
func VerifyRefusal(ctx context.Context, st sysd.Status) (reason.Reason, string) {
	return VerifyRefusalWith(ConfinedVersion)(ctx, st)
}

// VerifyRefusalWith checks the two things the run wrapper refuses for,
// never as root and never by running anything itself: the env_file
// (opened with the instance's user's filesystem identity: not a link,
// owned by root or the user) and the runtime (there, and not below its
// floor: its --version is asked through ask, inside the instance's
// sandbox, since the app may be able to replace it). The wrapper's own
// word is not taken: it ran as the app's user, and an app can exit 78
// too. When the runtime cannot be asked in the sandbox, the refusal is
// reported as runtime_rejected, unconfirmed.
func VerifyRefusalWith(ask Confined) Verifier {
	return func(ctx context.Context, st sysd.Status) (reason.Reason, string) {
		if len(st.ExecStart) < 3 || st.ExecStart[1] != "run" {
			return reason.Exited, "not started by bm2-probe run"
		}
		ra, err := ParseRunArgs(st.ExecStart[2:])
		if err != nil {
			return reason.Exited, err.Error()
		}
		id := identity.Identity{Name: st.User, UID: int(st.UID), GID: int(st.GID)}
		if st.UID == sysd.NoID || st.GID == sysd.NoID {
			// The run's dynamic user is gone already: any unprivileged user
			// sees what it saw of files that are not its own.
			id = identity.Identity{Name: "nobody", UID: 65534, GID: 65534}
		}
		if os.Geteuid() != 0 {
			// User scope: the user's manager ran the app as the user, and
			// runs this hook as the user too.
			id = identity.Self()
		}
		if ra.EnvFile != "" {
			err := identity.Do(id, func() error {
				_, err := envfile.Read(ra.EnvFile, st.WorkingDirectory, id.UID)
				return err
			})
			if err != nil {
				return reason.EnvFile, "env_file " + err.Error()
			}
		}
		asker := func(ctx context.Context, path string) (string, error) {
			asRoot := st.UID == 0 || (os.Geteuid() == 0 && st.UID == sysd.NoID && (st.User == "" || st.User == "root" || st.User == "0"))
			if asRoot {
				// An instance that runs as root: what another user can
				// replace is run by no one (the run wrapper refused it).
				if who, ok := jsruntime.Replaceable(path); ok {
					return "", RootRefusal(who)
				}
			}
			return ask(ctx, st, path)
		}
		rc := jsruntime.Check(ctx, ra.Kind, ra.Argv[0], jsruntime.SearchPath(), asker)
		switch {
		case rc.Retry || rc.Unchecked != "":
			why := rc.Problem
			if why == "" {
				why = rc.Unchecked
			}
			return reason.Rejected, "unconfirmed: exit status 78 is bm2's refusal, and bm2 could not ask the runtime in the instance's sandbox (" +
				why + "); `systemctl status` shows the run wrapper's message"
		case rc.Reason != "":
			return rc.Reason, "runtime " + rc.Problem + " (" + jsruntime.Advice(ra.Kind) + ")"
		}
		return reason.Exited, "exit status 78 is bm2's refusal, but bm2 found nothing to refuse: the app exited with it itself"
	}
}

// ConfinedVersion asks `<path> --version` in a transient service with the
// account and sandbox of the instance st (package confine), read from the
// unit files systemd loaded for it (st.FragmentPath, st.DropInPaths):
// root's, or in user scope the user's own.
func ConfinedVersion(ctx context.Context, st sysd.Status, path string) (string, error) {
	if st.FragmentPath == "" {
		return "", errors.New("systemd names no unit file for the instance")
	}
	var files [][]byte
	for _, p := range append([]string{st.FragmentPath}, st.DropInPaths...) {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("read the instance's unit file: %w", err)
		}
		files = append(files, data)
	}
	props, err := confine.Properties(files...)
	if err != nil {
		return "", err
	}
	opts := confine.Options{Timeout: jsruntime.VersionTimeout}
	if uid := os.Geteuid(); uid != 0 {
		opts.User, opts.RuntimeDir = true, "/run/user/"+strconv.Itoa(uid)
	}
	return confine.Run(ctx, props, opts, path, "--version")
}

// MarkedOr is the Verifier of the exit hook: an exit status 78 of an
// instance that root's fence step marked errored (port_fence_failed) is
// that refusal, told by the run wrapper, which refuses to start a marked
// instance; any other goes to verify. The mark is root's, in a directory
// only root writes: the app cannot forge it.
func MarkedOr(sdir state.Dir, id string, verify Verifier) Verifier {
	return func(ctx context.Context, st sysd.Status) (reason.Reason, string) {
		if m, ok, _ := sdir.InstanceErrored(id); ok && m.Reason == string(reason.FenceFailed) {
			return reason.FenceFailed, "its port fence could not be attached (" + m.Detail + ")"
		}
		return verify(ctx, st)
	}
}
