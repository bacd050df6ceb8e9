package explain

import (
	"context"
	"errors"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/state"
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
	// Running are the ports the registered project name holds through
	// instances that run now (Host.OwnPorts).
	Running func(ctx context.Context, name string) map[int]bool
	// RunningAs is the account systemd reports for a running instance
	// of p, when one runs.
	RunningAs func(ctx context.Context, p *config.Project) (identity.Identity, bool)
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
		if id, ok := s.RunningAs(ctx, p); ok {
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

// OwnPorts are the ports the registered project name holds through
// running instances.
func (s Scope) OwnPorts(ctx context.Context, name string) map[int]bool { return s.Running(ctx, name) }

// PortHolder names the holder of a listener on port owned by another
// user than uid.
func (s Scope) PortHolder(port int, uid uint32) (string, bool) { return s.Holder(port, uid) }
