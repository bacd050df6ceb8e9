package explain

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// fakeHost is a scope: its events, marks and files are what a test says.
type fakeHost struct {
	now      time.Time
	events   []journal.Event // newest last
	marks    map[string]state.Mark
	missing  map[string]bool // paths that are not there
	holders  map[int]string  // port -> who holds it
	states   []reuseport.PortState
	runError string // the first error its run logged
}

func (f *fakeHost) Now() time.Time { return f.now }
func (f *fakeHost) Clock() Clock   { return instantClock{} }
func (f *fakeHost) LastEvent(_ context.Context, project string, kind journal.Kind) (journal.Event, bool) {
	for k := len(f.events) - 1; k >= 0; k-- {
		if ev := f.events[k]; ev.Kind == kind {
			return ev, true
		}
	}
	return journal.Event{}, false
}
func (f *fakeHost) InstanceEvent(_ context.Context, project, id string, kinds ...journal.Kind) (journal.Event, bool) {
	for k := len(f.events) - 1; k >= 0; k-- {
		for _, kind := range kinds {
			if ev := f.events[k]; ev.Kind == kind && ev.Instance == id {
				return ev, true
			}
		}
	}
	return journal.Event{}, false
}
func (f *fakeHost) MarkOf(p *config.Project, i int, u view.UnitStatus) (state.Mark, bool) {
	m, ok := f.marks[p.Name]
	return m, ok
}
func (f *fakeHost) CrashLines(project, id string, n int) []string { return nil }
func (f *fakeHost) RunLog(context.Context, *config.Project, string, view.UnitStatus) (RunLog, bool) {
	if f.runError == "" {
		return RunLog{First: -1}, false
	}
	return RunLog{Lines: []string{f.runError}, First: 0}, true
}
func (f *fakeHost) IsUser() bool { return false }
func (f *fakeHost) LookupUser(_ context.Context, name, group string) (identity.Identity, error) {
	if name == "ghost" {
		return identity.Identity{}, errors.New("no such user")
	}
	return identity.Identity{Name: name, UID: 1001, GID: 1001}, nil
}
func (f *fakeHost) ProjectIdentity(ctx context.Context, p *config.Project, _ bool) (identity.Identity, error) {
	return f.LookupUser(ctx, p.User, p.Group)
}
func (f *fakeHost) Accounts() trust.Accounts { return nil }
func (f *fakeHost) Access(_ identity.Identity, path string, _ bool) error {
	if f.missing[path] {
		return &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return nil
}
func (f *fakeHost) PathOwner(string) (int, error) { return 0, errors.New("unknown") }
func (f *fakeHost) CheckPorts(_ context.Context, _ identity.Identity, ports []int) ([]reuseport.PortState, error) {
	return f.states, nil
}
func (f *fakeHost) OwnPorts(context.Context, string) map[int]bool { return nil }
func (f *fakeHost) PortHolder(port int, _ uint32) (string, bool) {
	h, ok := f.holders[port]
	return h, ok
}

// instantClock's deadlines have passed already: a wait for an event
// looks once.
type instantClock struct{}

func (instantClock) WithTimeout(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	return ctx, cancel
}
func (instantClock) Tick(time.Duration) (<-chan time.Time, func()) { return nil, func() {} }

func testProject() *config.Project {
	return &config.Project{Name: "api", Mode: config.Fork, Port: 3000, Instances: 2, User: "alice",
		Cwd: "/srv/api", Script: "server.js", Runtime: "node", MaxRestarts: 3}
}

// Explaining reads the scope only through its Host: a mark, the event
// that set it, how a run ended, what the project's user can open.
func TestThroughHost(t *testing.T) {
	ctx := context.Background()
	p := testProject()
	h := &fakeHost{now: time.Now(), marks: map[string]state.Mark{}, missing: map[string]bool{}}

	// port_in_use: the event names the instance and who holds the port.
	h.events = []journal.Event{{Kind: journal.InstanceErrored, Reason: reason.PortInUse, Instance: "api-1", Port: 3001,
		Message: "port 3001 is held by python3 (pid 812)"}}
	e, inst, ok := Errored(ctx, h, p, string(reason.PortInUse), "`bm2 start api`")
	if !ok || inst != 1 || e.Reason != reason.PortInUse || !strings.Contains(e.Message, "python3 (pid 812)") {
		t.Errorf("Errored = %+v, %d, %v", e, inst, ok)
	}

	// An instance's own mark names who holds its port.
	h.marks["api"] = state.Mark{Reason: string(reason.PortInUse), Detail: "nginx (pid 9)"}
	down := view.UnitStatus{ActiveState: "failed", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 1}
	e, ok = Instance(ctx, h, p, 0, down, "exit-code", "`bm2 serve`")
	if !ok || e.Reason != reason.PortInUse || !strings.Contains(e.Message, "nginx (pid 9)") || !strings.Contains(e.Message, "api-0 stays down") {
		t.Errorf("Instance, marked = %+v, %v", e, ok)
	}
	delete(h.marks, "api")

	// systemd could not become the user (217/USER).
	e, ok = Instance(ctx, h, p, 0, view.UnitStatus{ActiveState: "failed", ExecMainCode: 1, ExecMainStatus: 217}, "exit-code", "`bm2 serve`")
	if !ok || e.Reason != reason.UserMissing {
		t.Errorf("Instance, 217 = %+v, %v", e, ok)
	}

	// A crash loop whose script is missing says so, as the user sees it.
	h.missing[p.ScriptPath()] = true
	e, ok = Instance(ctx, h, p, 0, down, string(reason.Budget), "`bm2 start api`")
	if !ok || e.Reason != reason.ScriptMissing || !strings.Contains(e.Fix, "`bm2 start api`") {
		t.Errorf("Instance, crash loop = %+v, %v", e, ok)
	}
	found := Preflight(ctx, h, p, "")
	if len(found) != 1 || found[0].Reason != reason.ScriptMissing || !found[0].Certain() {
		t.Errorf("Preflight = %+v", found)
	}
	delete(h.missing, p.ScriptPath())

	// Else the run's own words.
	h.runError = "Error: boom"
	e, ok = Instance(ctx, h, p, 0, down, string(reason.Budget), "`bm2 start api`")
	if !ok || e.Reason != reason.Budget || !strings.Contains(e.Message, "Error: boom") {
		t.Errorf("Instance, crash loop = %+v, %v", e, ok)
	}

	// A user that does not exist is all Preflight says.
	ghost := testProject()
	ghost.User = "ghost"
	if found := Preflight(ctx, h, ghost, ""); len(found) != 1 || found[0].Reason != reason.UserMissing || !found[0].Missing {
		t.Errorf("Preflight, no user = %+v", found)
	}

	// A port an exclusive listener holds, and who.
	h.states = []reuseport.PortState{reuseport.Free, reuseport.Exclusive}
	h.holders = map[int]string{3001: "nginx (pid 9)"}
	s := SeePorts(ctx, h, p)
	held := Held(ctx, h, p, s)
	if len(held) != 1 || held[0].Port != 3001 || held[0].Holder != "nginx (pid 9)" {
		t.Errorf("Held = %+v (seen %+v)", held, s)
	}
}
