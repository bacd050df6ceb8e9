package hooks

import (
	"context"
	"fmt"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"

	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/state"
	"github.com/bm2dev/bm2/units"
)

// ReasonBudget is the errored reason of an instance that used up its
// restart budget.
const ReasonBudget = "restart_budget_exhausted"

// UnitFacts is what Failed reads about the instance from systemd.
type UnitFacts struct {
	Result     string // Result: exit-code, signal, start-limit-hit, …
	NRestarts  uint32
	ExitStatus int32 // ExecMainStatus
}

// Failed is `bm2-probe failed <project>-<i>`, the instance's OnFailure=
// unit: the instance has given up and waits for a person. It records why,
// once per failure, unless the whole project was stopped on purpose (an
// errored project already says why).
func Failed(ctx context.Context, id string, facts func(ctx context.Context, unit string) (UnitFacts, error),
	now time.Time, st state.Dir, crashes journal.CrashLog, events journal.Sink) error {
	project, index, ok := units.ParseInstance(id)
	if !ok {
		return fmt.Errorf("%q is not an instance name like api-0", id)
	}
	if _, errored, _ := st.Errored(project); errored {
		return nil
	}
	f, err := facts(ctx, units.Instance(project, index))
	if err != nil {
		return err
	}
	reason, msg := ReasonBudget, fmt.Sprintf("%s gave up after %d restarts (restart budget exhausted); its neighbours keep serving; `bm2 start %s` tries again",
		id, f.NRestarts, id)
	if f.ExitStatus == ExitRuntimeRejected {
		reason, msg = "runtime_rejected", fmt.Sprintf("%s not started: its runtime was refused (see `systemctl status %s`)", id, units.Instance(project, index))
	}
	c := journal.Crash{Time: now, Reason: reason, Detail: fmt.Sprintf("result=%s restarts=%d", f.Result, f.NRestarts)}
	err1 := crashes.Append(project, id, c)
	err2 := events.Emit(journal.Event{
		Kind: journal.InstanceErrored, Project: project, Instance: id, Reason: reason, Message: msg,
		Fields: map[string]string{"BM2_RESTARTS": fmt.Sprint(f.NRestarts), "BM2_SERVICE_RESULT": f.Result},
	})
	if err1 != nil {
		return err1
	}
	return err2
}

// BusFacts reads UnitFacts over systemd's D-Bus API.
func BusFacts(ctx context.Context, unit string) (UnitFacts, error) {
	conn, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		return UnitFacts{}, fmt.Errorf("connect to systemd: %w", err)
	}
	defer conn.Close()
	props, err := conn.GetUnitTypePropertiesContext(ctx, unit, "Service")
	if err != nil {
		return UnitFacts{}, fmt.Errorf("%s: %w", unit, err)
	}
	var f UnitFacts
	f.Result, _ = props["Result"].(string)
	f.NRestarts, _ = props["NRestarts"].(uint32)
	f.ExitStatus, _ = props["ExecMainStatus"].(int32)
	return f, nil
}
