package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/hooks"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/units"
)

// This file hands package explain the scope (Explainer) and turns what it
// finds into the errors serve refuses with.

// ExplainErrored words the errored mark of p (explain.Errored), verb
// being the command that tries again.
func (c *Client) ExplainErrored(ctx context.Context, p *config.Project, mark, verb string) (e reason.Explained, inst int, ok bool) {
	return explain.Errored(ctx, c.Explainer(), p, mark, explain.Again(p, verb))
}

// ExplainInstance words how instance i of p failed (explain.Instance).
func (c *Client) ExplainInstance(ctx context.Context, p *config.Project, i int, u view.UnitStatus, why, again string) (reason.Explained, bool) {
	return explain.Instance(ctx, c.Explainer(), p, i, u, why, again)
}

// hintOf is an explanation's fix as the hint after an error.
func hintOf(e reason.Explained) string {
	return e.FixLine()
}

// statOwner is the uid that owns path.
func statOwner(path string) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("%s: no owner", path)
	}
	return int(st.Uid), nil
}

// preflightErr is serve's refusal of the certain preflight failures: a
// user or path that is missing, and unless force, a path the account
// certainly cannot use. What bm2 cannot be certain of is a warning.
func (c *Client) preflightErr(ctx context.Context, p *config.Project, force bool) error {
	var msgs []string
	var first *explain.Finding
	found := explain.Preflight(ctx, c.Explainer(), p, "")
	for k, f := range found {
		switch {
		case f.Denied && force:
			warn(c.Report, "%s: %s (--force: serving anyway)", f.Reason, f.Message)
			continue
		case !f.Certain():
			warn(c.Report, "%s: %s; %s", f.Reason, f.Message, f.Unsure)
			aside(c.Report, "%s", hintOf(f.Explained))
			continue
		}
		msgs = append(msgs, string(f.Reason)+": "+f.Message)
		if first == nil {
			first = &found[k]
		}
	}
	if first == nil {
		return nil
	}
	hint := hintOf(first.Explained)
	if first.Denied {
		hint += ForceHint
	}
	return fail(Invalid, hint, errors.New(strings.Join(msgs, "\n")))
}

// MarkOf is the errored mark of instance i of p (port_in_use, set by the
// exit hook), when the instance is down: a mark stops only the next start,
// so a run that is up is not what it speaks of.
func (h explainHost) MarkOf(p *config.Project, i int, u view.UnitStatus) (state.Mark, bool) {
	switch st, _ := view.InstanceState(u); st {
	case view.StateOnline, view.StateLaunching, view.StateStopping:
		return state.Mark{}, false
	}
	return h.c.Layout.State().InstanceMark(units.InstanceID(p.Name, i))
}

// InstanceStateOf is ProjectInstanceState with the instance's own errored
// mark: a marked instance that is down is errored, for the mark's reason.
func (c *Client) InstanceStateOf(p *config.Project, i int, u view.UnitStatus) (st, reason string) {
	return explain.InstanceState(explainHost{c: c}, p, i, u)
}

// ForceHint is the end of the hint of what serve refuses on what it
// found on the host, and --force lets through.
const ForceHint = "; `bm2 serve --force` serves it anyway"

// heldErr refuses to serve p on a port that a listener its instances
// cannot join holds (what bm2 check calls a problem), before anything is
// written; with force it warns and goes on. A port that could not be
// probed is a warning.
func (c *Client) heldErr(ctx context.Context, p *config.Project, force bool) error {
	s := explain.SeePorts(ctx, c.Explainer(), p)
	if s.Err != nil {
		warn(c.Report, "ports %s could not be probed: %v", p.Ports(), s.Err)
		return nil
	}
	held := explain.Held(ctx, c.Explainer(), p, s)
	if len(held) == 0 {
		return nil
	}
	var msgs []string
	hint := "fix: stop that program, or give " + p.Name + " another `port =` in bm2.toml; then `bm2 serve`"
	for k, h := range held {
		e, ok := h.Explained(p, "`bm2 serve`")
		msg := h.Message(p)
		if ok {
			msg = string(e.Reason) + ": " + e.Message
		}
		if k == 0 && ok {
			hint = hintOf(e)
		}
		if force {
			warn(c.Report, "%s (--force: serving anyway)", msg)
			continue
		}
		msgs = append(msgs, msg)
	}
	if force {
		return nil
	}
	return fail(Invalid, hint+ForceHint, errors.New(strings.Join(msgs, "\n")))
}

// OwnPorts returns the ports that the registered project of that name
// holds through instances systemd runs right now. It is best effort: when
// systemd is not reachable (check works without it), nothing is known to
// be the project's own.
func (h explainHost) OwnPorts(ctx context.Context, name string) map[int]bool {
	c := h.c
	own := map[int]bool{}
	e, err := c.FindProject(name)
	if err != nil || e.Project == nil {
		return own
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	sd, err := c.Connect(ctx)
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

// Explainer is the scope as package explain reads it.
func (c *Client) Explainer() explain.Host { return explainHost{c, c.journal()} }

// journal is the scope's journal as an explanation reads it.
func (c *Client) journal() explain.Journal {
	return explain.Journal{Read: c.ReadJournal, Scope: c.ScopeLayout(), Clock: c.Clock}
}

// explainHost is the scope as package explain reads it (explain.Host);
// its journal's events and runs are explain.Journal's.
type explainHost struct {
	c *Client
	explain.Journal
}

func (h explainHost) Now() time.Time           { return h.c.Now() }
func (h explainHost) Clock() explain.Clock     { return h.c.Clock }
func (h explainHost) IsUser() bool             { return h.c.IsUser() }
func (h explainHost) Accounts() trust.Accounts { return h.c.Accounts }

func (h explainHost) CrashLines(project, id string, n int) []string {
	return h.c.Layout.CrashLogs.LastLines(project, id, n)
}

func (h explainHost) LookupUser(ctx context.Context, name, group string) (identity.Identity, error) {
	if h.c.LookupUser == nil {
		return identity.Identity{}, errors.New("no user database")
	}
	return h.c.LookupUser(ctx, name, group)
}

// Access is Env.Access, explain.AccessAs when unset.
func (h explainHost) Access(id identity.Identity, path string, dir bool) error {
	if h.c.Access != nil {
		return h.c.Access(id, path, dir)
	}
	return explain.AccessAs(id, path, dir)
}

func (h explainHost) PathOwner(path string) (int, error) {
	if h.c.PathOwner == nil {
		return 0, errors.New("no owner known")
	}
	return h.c.PathOwner(path)
}

func (h explainHost) CheckPorts(ctx context.Context, id identity.Identity, ports []int) ([]reuseport.PortState, error) {
	return h.c.CheckPorts(ctx, id, ports)
}

// PortHolder is Env.PortHolder, hooks.ForeignHolder when unset.
func (h explainHost) PortHolder(port int, uid uint32) (string, bool) {
	if h.c.PortHolder != nil {
		return h.c.PortHolder(port, uid)
	}
	return hooks.ForeignHolder(port, uid)
}
