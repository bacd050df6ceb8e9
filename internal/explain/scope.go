package explain

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/units"
)

// Scope is the [Host] of a scope on the real host's readers: its
// journal's events and runs (Journal, whose Scope layout holds the
// errored marks and crash.log), the user database, what an account may
// open, the ports, and what systemd says of the running instances.
// Package control fills it in from its environment.
type Scope struct {
	Journal
	// Time is the time (Host.Now).
	Time func() time.Time
	// Users is the user and group database (Host.Accounts).
	Users trust.Accounts
	// Lookup resolves a user (and group) by name; nil: there is no user
	// database.
	Lookup func(ctx context.Context, name, group string) (identity.Identity, error)
	// Opens tells whether id can open path (AccessAs when nil).
	Opens func(id identity.Identity, path string, dir bool) error
	// Owner is the uid that owns path; nil: none is known.
	Owner func(path string) (int, error)
	// Probe probes ports as id would see them (Host.CheckPorts).
	Probe func(ctx context.Context, id identity.Identity, ports []int) ([]reuseport.PortState, error)
	// Holder names the holder of a listener on port owned by another
	// user than uid (Host.PortHolder).
	Holder func(port int, uid uint32) (string, bool)
	// Connect reaches systemd, for what it says of the running
	// instances: their accounts and the ports they hold; Find is the
	// registered project of a name.
	Connect func(ctx context.Context) (Systemd, error)
	Find    func(name string) (config.Entry, error)
}

// Systemd is what explaining asks systemd of a project's running
// instances.
type Systemd interface {
	sysd.UnitsReader
	sysd.Lister
	io.Closer
}

// Now is the scope's time.
func (s Scope) Now() time.Time { return s.Time() }

// Clock is what the waits for an event run on.
func (s Scope) Clock() Clock { return s.Journal.Clock }

// IsUser tells whether the scope is a user's.
func (s Scope) IsUser() bool { return s.Scope.IsUser() }

// Accounts is the user and group database.
func (s Scope) Accounts() trust.Accounts { return s.Users }

// MarkOf is the errored mark of instance i of p (port_in_use, set by the
// exit hook), when the instance is down: a mark stops only the next start,
// so a run that is up is not what it speaks of.
func (s Scope) MarkOf(p *config.Project, i int, u view.UnitStatus) (state.Mark, bool) {
	switch st, _ := view.InstanceState(u); st {
	case view.StateOnline, view.StateLaunching, view.StateStopping:
		return state.Mark{}, false
	}
	return s.Scope.State().InstanceMark(units.InstanceID(p.Name, i))
}

// CrashLines are the last n lines of an instance's crash.log.
func (s Scope) CrashLines(project, id string, n int) []string {
	return s.Scope.CrashLogs.LastLines(project, id, n)
}

// LookupUser resolves a user (and group) by name.
func (s Scope) LookupUser(ctx context.Context, name, group string) (identity.Identity, error) {
	if s.Lookup == nil {
		return identity.Identity{}, errors.New("no user database")
	}
	return s.Lookup(ctx, name, group)
}

// ProjectIdentity is who a project's instances run as, for what bm2 checks
// on their behalf (ports, the runtime): user =, looked up in the user
// database; or the project's own account: the UID systemd reports for its
// running instances (when askSystemd), else the static account of that
// name when one exists, else a user that owns nothing (nobody: a fresh
// dynamic user owns no socket and no file, and sees what any
// unprivileged user sees).
func (s Scope) ProjectIdentity(ctx context.Context, p *config.Project, askSystemd bool) (identity.Identity, error) {
	if !p.OwnAccount() {
		return s.Lookup(ctx, p.User, p.Group)
	}
	if askSystemd {
		if id, ok := s.runningIdentity(ctx, p); ok {
			return id, nil
		}
	}
	if id, err := s.Lookup(ctx, p.Account(), p.Group); err == nil {
		return id, nil
	}
	id := identity.Nobody
	id.Name = p.Account() + " (not allocated yet: checked as nobody)"
	return id, nil
}

// Access tells whether id can open path (dir: enter it).
func (s Scope) Access(id identity.Identity, path string, dir bool) error {
	if s.Opens != nil {
		return s.Opens(id, path, dir)
	}
	return AccessAs(id, path, dir)
}

// PathOwner is the uid that owns path.
func (s Scope) PathOwner(path string) (int, error) {
	if s.Owner == nil {
		return 0, errors.New("no owner known")
	}
	return s.Owner(path)
}

// CheckPorts probes ports as id would see them.
func (s Scope) CheckPorts(ctx context.Context, id identity.Identity, ports []int) ([]reuseport.PortState, error) {
	return s.Probe(ctx, id, ports)
}

// OwnPorts returns the ports that the registered project of that name
// holds through instances systemd runs right now. It is best effort: when
// systemd is not reachable (check works without it), nothing is known to
// be the project's own.
func (s Scope) OwnPorts(ctx context.Context, name string) map[int]bool {
	own := map[int]bool{}
	e, err := s.Find(name)
	if err != nil || e.Project == nil {
		return own
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	sd, err := s.Connect(ctx)
	if err != nil {
		return own
	}
	defer sd.Close()
	names := make([]string, e.Project.Instances)
	for i := range names {
		names[i] = units.Instance(name, i)
	}
	statuses, err := sd.Units(ctx, names)
	if err != nil {
		return own
	}
	for i, u := range statuses {
		if u.MainPID != 0 { // a live main process is what holds the port
			own[e.Project.InstancePort(i)] = true
		}
	}
	return own
}

// runningIdentity asks systemd for the UID and GID of a running instance.
func (s Scope) runningIdentity(ctx context.Context, p *config.Project) (identity.Identity, bool) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	sd, err := s.Connect(ctx)
	if err != nil {
		return identity.Identity{}, false
	}
	defer sd.Close()
	// Only units systemd has loaded: asking about one it has not would
	// load the bare template (and log that it has no ExecStart=).
	loaded, err := sd.Loaded(ctx, []string{units.InstancePattern(p.Name)})
	if err != nil {
		return identity.Identity{}, false
	}
	for _, l := range loaded {
		if name, _, ok := units.ParseInstance(l.Name); !ok || name != p.Name || l.ActiveState != "active" {
			continue
		}
		st, err := sd.Units(ctx, []string{l.Name})
		if err == nil && len(st) == 1 && st[0].UID != sysd.NoID && st[0].GID != sysd.NoID && st[0].MainPID != 0 {
			return identity.Identity{Name: p.Account(), UID: int(st[0].UID), GID: int(st[0].GID)}, true
		}
	}
	return identity.Identity{}, false
}

// PortHolder names the holder of a listener on port owned by another
// user than uid.
func (s Scope) PortHolder(port int, uid uint32) (string, bool) { return s.Holder(port, uid) }
