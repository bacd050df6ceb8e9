package preflight

import (
	"context"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/reuseport"
)

// UnknownToOthers is the state of a held port checked by someone who
// could not take the project's identity.
const UnknownToOthers = reuseport.PortState(-1)

// Ports is what bm2 check finds of a project's ports, as its user would
// see them.
type Ports struct {
	// Worker: the project has no port of its own; nothing was looked at.
	Worker bool
	// PortsSeen: checked as someone else (AsSelf), every held port is
	// UnknownToOthers, since only "free" is the same for every user.
	explain.PortsSeen
	// Held are the ports held by a listener that is not one of the
	// project's instances (what bm2 serve refuses); none when Err.
	Held []explain.HeldPort
}

// SeePorts probes p's ports as its user would see them.
func SeePorts(ctx context.Context, c *control.Client, p *config.Project) Ports {
	if p.IsWorker() {
		return Ports{Worker: true}
	}
	s := explain.SeePorts(ctx, c.Explainer(), p)
	r := Ports{PortsSeen: s}
	if len(s.Ports) == 0 {
		return r
	}
	if s.AsSelf {
		// Whether a held port can be joined depends on who asks.
		for i, st := range s.States {
			if st != reuseport.Free {
				s.States[i] = UnknownToOthers
			}
		}
	}
	if s.Err != nil {
		return r
	}
	r.Held = explain.Held(ctx, c.Explainer(), p, s)
	return r
}

// Runtime finds p's runtime and asks its version, unless the file was
// refused (ok false): a refused file's account, group and sandbox are
// not root's to give, so its runtime is not run as it wrote them (nor as
// anything else: what it would run as is refused). asked says whether
// it was.
func Runtime(ctx context.Context, c *control.Client, p *config.Project, ok bool) (r jsruntime.Result, asked bool) {
	if !ok {
		return jsruntime.Result{}, false
	}
	return control.CheckRuntime(ctx, &c.Env, p), true
}

// Registration is whether a project could be registered beside the
// projects already registered; each field nil when nothing is in the
// way.
type Registration struct {
	// Owner: its name is another file's project.
	Owner error
	// Conflict: its port range overlaps a registered project's (a
	// *config.ConflictError when it does).
	Conflict error
	// System: in user scope, its port range overlaps a system project's
	// (serve refuses an overlap, and so does check).
	System error
}

// Register checks p against the registered projects: its name's owner,
// and its port range (beside the system's projects too, in user scope).
func Register(ctx context.Context, c *control.Client, p *config.Project) Registration {
	entries, _ := c.Projects().Entries()
	return Registration{
		Owner:    registry.CheckOwner(p, entries, false),
		Conflict: control.CheckConflict(ctx, c.Connect, c.Scope(), p, entries),
		System:   control.CheckSystemConflict(c.Scope(), p),
	}
}
