package explain

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// This file finds the failure mode (package reason) of a project or an
// instance: from the errored mark and the event that set it, from how an
// instance's last run ended, from its crash.log, and, before anything
// starts, from what the project's user can see (preflight).

// Errored words the errored mark of p: its reason's mode, filled in from
// the event that set it (the instance, the listener's address, the holder
// of the port). inst is the instance that event names, -1 if none; again
// is the command that tries again, as the fix ends.
func Errored(ctx context.Context, h Host, p *config.Project, mark, again string) (e reason.Explained, inst int, ok bool) {
	why := reason.Reason(mark)
	facts := reason.Facts{Project: p.Name, Port: p.Port, Runtime: string(p.Runtime), Again: again, Preload: p.ReusePort == config.ReusePortPreload}
	kind := journal.ReuseportMissing
	if why == reason.PortInUse {
		kind = journal.InstanceErrored
	}
	inst = -1
	ev, found := eventOfMark(ctx, h, p.Name, kind, why)
	if found && ev.Reason == why {
		facts.Instance = ev.Instance
		if ev.Port != 0 {
			facts.Port = ev.Port
		}
		if n, idx, ok := units.ParseInstance(ev.Instance); ok && n == p.Name {
			inst = idx
		}
	} else {
		found = false
	}
	e, ok = reason.Explain(why, facts)
	if !ok {
		return e, inst, false
	}
	if found && why != reason.ReuseportMissing {
		// Its words name what only the probe or the hook saw: the
		// listener's address, the process that holds the port.
		e.Message = reason.CleanMessage(ev.Message)
	}
	return e, inst, true
}

// markEventWait bounds how long Errored waits for the event of a
// mark it has just seen: root's side writes the mark first and sends the
// event right after, and on a loaded host journalctl may not have it yet.
const markEventWait = 2 * time.Second

// eventOfMark is the last event of kind for the project, waiting up to
// markEventWait for one with reason why (the words of a loopback_only or
// port_in_use verdict are in it alone).
func eventOfMark(ctx context.Context, h Host, project string, kind journal.Kind, why reason.Reason) (journal.Event, bool) {
	ev, found := h.LastEvent(ctx, project, kind)
	if (found && ev.Reason == why) || why == reason.ReuseportMissing {
		return ev, found
	}
	wctx, cancel := h.Clock().WithTimeout(ctx, markEventWait)
	defer cancel()
	tick, stop := h.Clock().Tick(100 * time.Millisecond)
	defer stop()
	for {
		select {
		case <-wctx.Done():
			return ev, found
		case <-tick:
		}
		if ev, found = h.LastEvent(ctx, project, kind); found && ev.Reason == why {
			return ev, found
		}
	}
}

// verdictRecent is how long after a run ended its exit hook's event is
// still waited for (see verdictOf): far more than the relay takes.
const verdictRecent = time.Minute

// verdictOf is the exit hook's word on a run of instance id that ended
// with status 78: runtime_rejected when it confirmed the refusal,
// instance_crashed when it did not. The hook's events are relayed
// (package relay): they reach the journal a few tens of milliseconds
// after the unit has failed, so for a run that ended within verdictRecent
// it waits up to markEventWait for the one of this run (u's
// InvocationID). A run that ended before gets the one there is, or none,
// at once (bm2 status does not wait for an event lost long ago); so does
// a run without an invocation, which gets the last one of the instance.
func verdictOf(ctx context.Context, h Host, project, id string, u view.UnitStatus) (journal.Event, bool) {
	invocation := u.InvocationID
	last := func() (journal.Event, bool) {
		return h.InstanceEvent(ctx, project, id, journal.RuntimeRejected, journal.InstanceCrashed)
	}
	ev, found := last()
	if invocation == "" || (found && ev.Invocation == invocation) {
		return ev, found
	}
	if !u.InactiveEnter.IsZero() && h.Now().Sub(u.InactiveEnter) > verdictRecent {
		return journal.Event{}, false
	}
	wctx, cancel := h.Clock().WithTimeout(ctx, markEventWait)
	defer cancel()
	tick, stop := h.Clock().Tick(50 * time.Millisecond)
	defer stop()
	for {
		select {
		case <-wctx.Done():
			return journal.Event{}, false // none of this run: an older run's would mislead
		case <-tick:
		}
		if ev, found = last(); found && ev.Invocation == invocation {
			return ev, true
		}
	}
}

// Instance words how instance i of p failed (u: its last state),
// when that is one of the failure modes: a refusal (the exit hook's
// runtime_rejected event says which), systemd's own cannot-start statuses,
// a crash loop (with the last crash.log line, or the missing script or
// directory that caused it).
//
// again is the command that tries again, as the fix ends.
func Instance(ctx context.Context, h Host, p *config.Project, i int, u view.UnitStatus, why, again string) (reason.Explained, bool) {
	id := units.InstanceID(p.Name, i)
	facts := reason.Facts{Project: p.Name, Instance: id, Port: p.InstancePort(i), Runtime: string(p.Runtime), Again: again, Preload: p.ReusePort == config.ReusePortPreload}
	if m, ok := h.MarkOf(p, i, u); ok && m.Reason == string(reason.PortInUse) {
		// The exit hook's mark names who holds the port.
		facts.Detail = m.Detail
		if facts.Detail == "" {
			facts.Detail = "a process of another user"
		}
		if again != "`bm2 serve`" {
			facts.Again = "`bm2 start " + id + "`"
		}
		e, ok := reason.Explain(reason.PortInUse, facts)
		e.Message += "; " + id + " stays down until it is started again (its neighbours keep serving)"
		return e, ok
	}
	exited := u.ExecMainCode == 1
	switch {
	case exited && u.ExecMainStatus == 78:
		r := reason.Rejected
		facts.Detail = "the cause is not known to bm2"
		if ev, ok := verdictOf(ctx, h, p.Name, id, u); ok && ev.Kind == journal.RuntimeRejected && ev.Reason.Refusal() {
			r = ev.Reason
			_, what, _ := strings.Cut(ev.Message, " not started: ")
			what, _, _ = strings.Cut(what, " (install ") // the fix says it
			facts.Detail = strings.TrimPrefix(strings.TrimPrefix(what, "runtime "), "env_file ")
		}
		return reason.Explain(r, facts)
	case exited && reason.OfSpawn(int(u.ExecMainStatus)) != "":
		r := reason.OfSpawn(int(u.ExecMainStatus))
		facts.Detail = p.User
		if r == reason.CwdMissing {
			facts.Detail = fmt.Sprintf("%s does not exist or cannot be entered by the app's user (systemd: exit status 200/CHDIR)", p.Cwd)
			if p.OwnAccount() {
				facts.Detail += ownerCould(ctx, h, p.Cwd)
			}
		}
		return reason.Explain(r, facts)
	case why == string(reason.Budget):
		// A crash loop: what made it, when bm2 can tell, else the last crash.
		found, _ := PreflightDefinite(ctx, h, p, id)
		for _, pe := range found {
			if pe.Reason == reason.ScriptMissing || pe.Reason == reason.CwdMissing || pe.Reason == reason.EnvFile {
				pe.Fix = strings.Replace(pe.Fix, "`bm2 start "+p.Name+"`", again, 1)
				return pe, true
			}
		}
		// The last run's own words: its exit and the first error it
		// logged. Without an error line, the crash.log line the exit
		// hook wrote for that run (it names an OOM kill, say); never
		// one of an older run: a run systemd could not even start
		// (233/RUNTIME_DIRECTORY) has no hook to write one.
		run, _ := h.RunLog(ctx, p, units.Instance(p.Name, i), u)
		facts.Detail = ExitWords(u, run)
		if run.FirstError() == "" {
			lines := h.CrashLines(p.Name, id, 4)
			for k := len(lines) - 1; k >= 0; k-- {
				cl, ok := crashlog.ParseLine(lines[k])
				if !ok || cl.Reason == reason.Budget {
					continue
				}
				if u.ExecMainStart.IsZero() || !cl.Time.Before(u.ExecMainStart.Truncate(time.Millisecond)) {
					facts.Detail = lines[k]
				}
				break
			}
		}
		e, ok := reason.Explain(reason.Budget, facts)
		if denied := deniedBind(h, p, id, u); denied != "" {
			// The fence saw the app bind another port than its own:
			// that, and its fix, say more than the app's EPERM.
			e.Fix = denied + "; then " + again
		}
		return e, ok
	}
	return reason.Explained{}, false
}

// deniedBind is what the exit hook wrote of a bind the port fence denied
// instance id's last run (hooks.DeniedText: the port, and what to
// write), from the run's own crash.log line; "" when it wrote none.
func deniedBind(h Host, p *config.Project, id string, u view.UnitStatus) string {
	lines := h.CrashLines(p.Name, id, 4)
	for k := len(lines) - 1; k >= 0; k-- {
		cl, ok := crashlog.ParseLine(lines[k])
		if !ok || cl.Reason == reason.Budget {
			continue
		}
		if (u.ExecMainStart.IsZero() || !cl.Time.Before(u.ExecMainStart.Truncate(time.Millisecond))) &&
			strings.HasPrefix(cl.Detail, "its bind to port ") {
			return cl.Detail
		}
		return ""
	}
	return ""
}

// Finding is one failure mode of a project found before it starts
// (Preflight), worded with its fix.
type Finding struct {
	reason.Explained
	// Missing: what it names (the user, the path) is not there.
	Missing bool
	// Denied: the path is there, and the project's account certainly
	// cannot use it (see surelyDenied).
	Denied bool
	// Unsure says why a denial bm2 saw is not certain ("" when Missing
	// or Denied).
	Unsure string
}

// Certain tells whether no start can get past f: what serve refuses and
// bm2 check calls a problem (the rest are warnings).
func (f Finding) Certain() bool { return f.Missing || f.Denied }

// PreflightDefinite is Preflight, with definite marking the findings no
// start can get past (Finding.Certain).
func PreflightDefinite(ctx context.Context, h Host, p *config.Project, inst string) (found []reason.Explained, definite []bool) {
	for _, f := range Preflight(ctx, h, p, inst) {
		found = append(found, f.Explained)
		definite = append(definite, f.Certain())
	}
	return found, definite
}

// Preflight finds the failure modes of p that can be known before it
// starts, as its user sees things: a user that does not exist, a working
// directory, script or env_file that is missing or that user cannot use.
// (The runtime, the ports and conflicts are checked where they were
// already: the runtime check, check's port lines, the registry's
// conflicts.) Each one
// comes worded with its fix, and says whether it is certain (missing, or
// certainly out of the account's reach) or only what bm2 saw.
//
// inst is the instance the words name ("" for the first); they end with
// `bm2 serve` without one, `bm2 start <project>` with one.
func Preflight(ctx context.Context, h Host, p *config.Project, inst string) (found []Finding) {
	again := "`bm2 serve`"
	if inst != "" {
		again = ""
	}
	facts := func(detail string) reason.Facts {
		return reason.Facts{Project: p.Name, Instance: inst, Port: p.Port, Runtime: string(p.Runtime), Detail: detail, Again: again}
	}
	var r *reach
	add := func(rs reason.Reason, detail string, err error, path string, dir bool) {
		e, ok := reason.Explain(rs, facts(detail))
		if !ok {
			return
		}
		f := Finding{Explained: e, Missing: errors.Is(err, fs.ErrNotExist)}
		if !f.Missing && errors.Is(err, fs.ErrPermission) {
			if r == nil {
				pr := projectReach(ctx, h, p)
				r = &pr
			}
			f.Denied = surelyDenied(*r, path, dir)
			if !f.Denied {
				f.Unsure = r.uncertainText()
			}
		}
		found = append(found, f)
	}
	var id identity.Identity
	if !p.OwnAccount() {
		var err error
		id, err = h.LookupUser(ctx, p.User, p.Group)
		if err != nil && p.Group != "" {
			// The user may be there and the group not: not user_missing.
			id, err = h.LookupUser(ctx, p.User, "")
		}
		if err != nil {
			add(reason.UserMissing, p.User, fs.ErrNotExist, "", false)
			return found
		}
	} else {
		id, _ = h.ProjectIdentity(ctx, p, false)
	}
	who := id.Name
	if who == "" {
		who = id.String()
	}
	access := h.Access
	if err := access(id, p.Cwd, true); err != nil {
		detail := accessText(p.Cwd, err, who)
		if !errors.Is(err, fs.ErrNotExist) && p.OwnAccount() {
			detail += ownerCould(ctx, h, p.Cwd)
		}
		add(reason.CwdMissing, detail, err, p.Cwd, true)
		return found
	}
	if err := access(id, p.ScriptPath(), false); err != nil {
		add(reason.ScriptMissing, accessText(p.ScriptPath(), err, who), err, p.ScriptPath(), false)
	}
	if p.EnvFile != "" {
		path := p.EnvFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.Cwd, path)
		}
		if err := access(id, path, false); err != nil {
			add(reason.EnvFile, accessText(path, err, who), err, path, false)
		}
	}
	return found
}

// ownerCould is what a project on its own account may do when that
// account cannot enter dir: run as dir's owner, where the owner can (a
// user's home directory is closed to other accounts on Debian 13 and
// Ubuntu, and a PM2 app lives in one). "" when the owner is root, not in
// the user database, or cannot enter dir either.
func ownerCould(ctx context.Context, h Host, dir string) string {
	accounts := h.Accounts()
	if accounts == nil {
		return ""
	}
	uid, err := h.PathOwner(dir)
	if err != nil || uid == 0 {
		return ""
	}
	a, err := accounts.UserID(uid)
	if err != nil || a.Name == "" {
		return ""
	}
	id, err := h.LookupUser(ctx, a.Name, "")
	if err != nil || h.Access(id, dir, true) != nil {
		return ""
	}
	return fmt.Sprintf("; %s, who owns it, can: `user = %q` in bm2.toml runs the app as %s", a.Name, a.Name, a.Name)
}

// accessText is the {detail} of a path the project's user cannot use.
func accessText(path string, err error, who string) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return path + ": no such file or directory"
	}
	return fmt.Sprintf("%s: %v (as user %s)", path, err, who)
}

// AccessAs opens path (a directory: enters it) as id; a caller that cannot
// take id (not root) checks as itself, and then only that the path
// exists: whether id may read it is not known.
func AccessAs(id identity.Identity, path string, dir bool) error {
	try := func() error {
		if dir {
			// Entering takes search permission on it, which stat of
			// "dir/." needs too.
			_, err := os.Stat(path + "/.")
			return err
		}
		// O_NONBLOCK: a FIFO the app's user put there must not keep a
		// root bm2 waiting for a writer.
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	err := identity.Do(id, try)
	if errors.Is(err, identity.ErrNotPermitted) {
		// What the caller cannot see says nothing of id.
		if _, err = os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	return err
}

// PreflightAll is every preflight failure of p, worded for bm2 check.
func PreflightAll(ctx context.Context, h Host, p *config.Project) []Finding {
	found := Preflight(ctx, h, p, "")
	for k := range found {
		found[k].Fix = strings.ReplaceAll(found[k].Fix, "then `bm2 serve`", "then `bm2 check`")
	}
	return found
}

// ProblemText is one of bm2 check's problems: reason, message and fix.
func ProblemText(e reason.Explained) string {
	return fmt.Sprintf("%s: %s; fix: %s", e.Reason, e.Message, e.Fix)
}
