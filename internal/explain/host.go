package explain

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// Host is what explaining a failure reads of the scope: the journal's
// events, the errored marks, crash.log, the user database and what the
// project's account may open, and its ports. Package control gives the
// scope's; tests give a fake.
type Host interface {
	// Now is the time, and Clock what the waits for an event that is
	// about to reach the journal run on.
	Now() time.Time
	Clock() Clock

	// LastEvent is the project's most recent event of kind;
	// InstanceEvent the most recent of kinds that names instance id.
	LastEvent(ctx context.Context, project string, kind journal.Kind) (journal.Event, bool)
	InstanceEvent(ctx context.Context, project, id string, kinds ...journal.Kind) (journal.Event, bool)
	// MarkOf is the errored mark of instance i of p that holds while its
	// unit is u (a mark stops only the next start).
	MarkOf(p *config.Project, i int, u view.UnitStatus) (state.Mark, bool)
	// CrashLines are the last n lines of an instance's crash.log.
	CrashLines(project, id string, n int) []string
	// RunLog is what run u of instance unit of p logged; ok is false
	// when nothing of it is in the journal.
	RunLog(ctx context.Context, p *config.Project, unit string, u view.UnitStatus) (r RunLog, ok bool)

	// IsUser tells whether the scope is a user's.
	IsUser() bool
	// LookupUser resolves a user (and group) by name; ProjectIdentity is
	// who p's instances run as (askSystemd: a running instance's
	// account, for the project's own).
	LookupUser(ctx context.Context, name, group string) (identity.Identity, error)
	ProjectIdentity(ctx context.Context, p *config.Project, askSystemd bool) (identity.Identity, error)
	// Accounts is the user and group database, nil when there is none.
	Accounts() trust.Accounts
	// Access tells whether id can open path (dir: enter it); AccessAs
	// is the real one.
	Access(id identity.Identity, path string, dir bool) error
	// PathOwner is the uid that owns path.
	PathOwner(path string) (int, error)

	// CheckPorts probes ports as id would see them; OwnPorts are the
	// ports the registered project name holds through running instances;
	// PortHolder names the holder of a listener on port owned by another
	// user than uid.
	CheckPorts(ctx context.Context, id identity.Identity, ports []int) ([]reuseport.PortState, error)
	OwnPorts(ctx context.Context, name string) map[int]bool
	PortHolder(port int, uid uint32) (string, bool)
}

// Clock is what a wait for an event needs of time: a deadline and a
// ticker.
type Clock interface {
	WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	Tick(d time.Duration) (<-chan time.Time, func())
}
