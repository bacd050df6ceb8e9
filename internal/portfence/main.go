package portfence

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Main is `bm2-probe fence INSTANCE [PORT...]`, the ExecStartPre=+ of every
// system-scope instance: it attaches the fence allowing PORT... (none: a
// worker's instance, which may bind an ephemeral port only) to the
// cgroup v2 directory of bm2@INSTANCE.service, in which it runs. It
// believes only its command line (the generator's drop-in) and the
// kernel: nothing the app can write.
//
// Where the host cannot give a fence (no cgroup v2 directory for the
// unit, ErrNoUnified; a kernel without cgroup BPF, UnsupportedError; not
// root) it writes one line on stderr (the unit's journal) saying why and
// succeeds. Any other failure fails closed (see failed): the instance is
// marked errored and the run wrapper refuses to start it. The generator
// writes the step with "-", so that systemd does not fail the start for it
// (a failed ExecStartPre= would also turn a missing WorkingDirectory=
// into a restart loop): the refusal comes from the wrapper instead, with
// exit status 78, which is not restarted. A mark that cannot be written
// is said through events (state_write_failed).
func Main(args []string, stderr io.Writer, events journal.Sink) error {
	if len(args) == 2 && args[0] == "--no-bind" {
		return noBind(args[1], stderr)
	}
	if len(args) < 1 {
		return errors.New("usage: bm2-probe fence PROJECT-INDEX [PORT...]")
	}
	inst := args[0]
	if inst == "" || strings.ContainsAny(inst, "/\x00") || strings.HasPrefix(inst, ".") {
		return fmt.Errorf("fence: %q is not an instance name", inst)
	}
	var ports []int
	for _, a := range args[1:] {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("fence: %q is not a port (1-65535)", a)
		}
		ports = append(ports, n)
	}
	unit := "bm2@" + inst + ".service"
	return fenceSelf(unit, "ports not fenced", "starts", stderr, func(dir string) error { return Apply(dir, ports) },
		func(err error) error { return failed(inst, err, events) })
}

// fenceSelf attaches a fence (apply) to the cgroup of unit, in which the
// step runs. Where the host cannot give one (not root, no cgroup v2
// directory for the unit, a kernel without cgroup BPF) it writes one line
// on stderr, "<what>: <why>; <unit> <goes> without the fence", and
// succeeds; any other failure is fail's.
func fenceSelf(unit, what, goes string, stderr io.Writer, apply func(dir string) error, fail func(error) error) error {
	notFenced := func(why error) error {
		fmt.Fprintf(stderr, "bm2-probe fence: %s: %v; %s %s without the fence\n", what, why, unit, goes)
		return nil
	}
	if os.Geteuid() != 0 {
		return notFenced(errors.New(UserScopeReason))
	}
	dir, err := SelfUnitDir(unit)
	if errors.Is(err, ErrNoUnified) {
		return notFenced(err)
	}
	if err != nil {
		return fail(fmt.Errorf("find the cgroup of %s: %w", unit, err))
	}
	err = apply(dir)
	var unsupported *UnsupportedError
	if errors.As(err, &unsupported) {
		return notFenced(err)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// Marks is where failed marks an instance errored (the system scope's
// state directory; tests replace it).
var Marks = layout.System().State()

// failed fails closed: on a host that can fence, an instance whose fence
// did not attach is marked errored (port_fence_failed, under /run), and
// the run wrapper, which starts the app after this step, refuses to start
// an instance so marked (exit status 78: no restart loop). The mark keeps
// later starts out too, until `bm2 start` of the instance clears it.
// A mark that cannot be written (a full /run) is said through events: the
// wrapper then has nothing to refuse for.
func failed(inst string, err error, events journal.Sink) error {
	outcome := "the instance is marked errored and does not start"
	if _, merr := Marks.SetInstanceErrored(inst, state.Mark{Reason: "port_fence_failed", Detail: err.Error()}); merr != nil {
		err = errors.Join(err, merr)
		outcome = "the instance could not be marked errored, and starts without its fence"
		if events != nil {
			project, _, _ := units.ParseInstance(inst)
			if serr := journal.ReportWriteFailure(events, project, inst, Marks.InstanceErroredPath(inst), merr,
				"the run wrapper does not know to refuse "+inst+", which starts without its port fence"); serr != nil {
				err = errors.Join(err, serr)
			}
		}
	}
	return fmt.Errorf("fence bm2@%s.service: %w; %s", inst, err, outcome)
}

// UserScopeReason is why a user manager's instances are not fenced.
const UserScopeReason = "user scope: a user manager cannot attach BPF programs"

// noBind is `bm2-probe fence --no-bind bm2-PROJECT-health.service`, the
// ExecStartPre=+ of a system-scope health check: it attaches the fence
// that lets the unit bind nothing (ApplyNoBind) to the unit's cgroup, in
// which it runs, before the check starts its child as the instances'
// user. That child must never listen: were the app to drive it, it could
// not take a port outside the app's own fence. SocketBindDeny=any in the
// same unit does this where systemd has its BPF framework.
//
// Where the host cannot fence (as for an instance) it says why on stderr
// and succeeds: the child is still non-dumpable (bm2-probe is installed
// 0711), so the app cannot drive it. Any other failure fails the step,
// and so the check's run, which counts for nothing.
func noBind(unit string, stderr io.Writer) error {
	project, ok := strings.CutPrefix(unit, "bm2-")
	project, ok2 := strings.CutSuffix(project, "-health.service")
	if !ok || !ok2 || project == "" || strings.ContainsAny(project, "/\x00") || strings.HasPrefix(project, ".") {
		return fmt.Errorf("fence --no-bind: %q is not a health check's unit (bm2-PROJECT-health.service)", unit)
	}
	return fenceSelf(unit, "binds not fenced", "runs", stderr, ApplyNoBind,
		func(err error) error { return fmt.Errorf("fence %s: %w", unit, err) })
}
