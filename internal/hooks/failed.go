package hooks

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Failed is `bm2-probe failed <project>-<i>`, the instance's OnFailure=
// unit: the instance has given up and waits for a person. It records why,
// once per failure, unless the whole project was stopped on purpose or the
// instance itself was marked errored (the mark already says why). An
// exit status 78, which is never restarted, is judged here, off the stop
// path (verify, VerifyRefusal in bm2-probe; the exit hook leaves it, see
// Later): runtime_rejected with the reason found, before instance_errored.
func Failed(ctx context.Context, id string, sd Systemd, now time.Time, st state.Dir, crashes crashlog.Logs, events journal.Sink, verify Verifier) error {
	project, index, ok := units.ParseInstance(id)
	if !ok {
		return fmt.Errorf("%q is not an instance name like api-0", id)
	}
	if _, errored, _ := st.Errored(project); errored {
		return nil
	}
	if _, marked, _ := st.InstanceErrored(id); marked {
		return nil // the exit hook has said why (port_in_use)
	}
	f, err := sd.Unit(ctx, units.Instance(project, index))
	if err != nil {
		return err
	}
	// A stop that had to end in SIGKILL (the app outlived stop_timeout_ms)
	// fails the unit too. If a start or restart job is bringing it back
	// (`bm2 restart`, `reload`), or it was stopped on purpose and never
	// restarted, it did not give up: the exit hook has recorded the kill.
	if !f.Gone() || (f.Result == "timeout" && f.NRestarts == 0) {
		return nil
	}
	why := reason.Budget
	msg := fmt.Sprintf("%s gave up after %d restarts (restart budget exhausted); its neighbours keep serving; `bm2 start %s` tries again",
		id, f.NRestarts, id)
	if index == units.Surge {
		msg = fmt.Sprintf("%s, the surge instance of a reload, gave up after %d restarts (restart budget exhausted); the instances keep serving; `bm2 reload %s` tries again",
			id, f.NRestarts, project)
	}
	if f.ExecMainCode == cldExited && f.ExecMainStatus == ExitRefused {
		f = RunIdentity(ctx, f)
		var detail string
		why, detail = verify(ctx, f)
		if why == "" {
			why, detail = reason.Rejected, "not judged"
		}
		if err := recordRefusal(crashes, events, id, f, now, why, detail); err != nil {
			return err
		}
		systemctl := "systemctl"
		if os.Geteuid() != 0 {
			systemctl = "systemctl --user" // the user's own manager runs this hook
		}
		msg = fmt.Sprintf("%s not started (%s): fix it, then `bm2 start %s`; `%s status %s` shows the message",
			id, why, id, systemctl, units.Instance(project, index))
		if !why.Refusal() {
			why = reason.Exited
			msg = fmt.Sprintf("%s exited with status %d, which systemd never restarts (bm2 keeps it for its refusals): `bm2 logs %s` shows why; `bm2 start %s` tries again",
				id, ExitRefused, project, id)
		}
	}
	if r := reason.OfSpawn(int(f.ExecMainStatus)); f.ExecMainCode == cldExited && r != "" {
		why = r
		e, _ := reason.Explain(r, reason.Facts{Project: project, Instance: id, Detail: spawnDetail(r, f)})
		msg = e.Message + "; " + e.Fix
	}
	c := crashlog.Crash{Time: now, Reason: why, Detail: fmt.Sprintf("result=%s restarts=%d", f.Result, f.NRestarts)}
	return record(crashes, events, project, id, f.GID, c, journal.Event{
		Kind: journal.InstanceErrored, Project: project, Instance: id, Reason: why, Message: msg,
		Restarts: fmt.Sprint(f.NRestarts), ServiceResult: f.Result, Invocation: f.InvocationID,
	})
}

// RunIdentity fills in the UID and GID a failed unit ran with, which
// systemd no longer reports once it is not running (sysd.NoID), from its
// User= and Group= (written by bm2's generator, root's): the env_file is
// checked as that user, and a crash.log the failure hook is first to
// write gets that group. A DynamicUser= account is gone with its run and
// stays unknown (the check then takes an unprivileged user's view).
var RunIdentity = func(ctx context.Context, st sysd.Status) sysd.Status {
	if st.UID != sysd.NoID || st.User == "" {
		return st
	}
	id, err := identity.Lookup(ctx, st.User, st.Group)
	if err != nil {
		return st
	}
	st.UID, st.GID = uint32(id.UID), uint32(id.GID)
	return st
}
