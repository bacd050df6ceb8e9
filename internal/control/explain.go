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
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/units"
)

// This file hands package explain the scope (Explainer) and turns what it
// finds into the errors serve refuses with.

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
func preflightErr(ctx context.Context, h explain.Host, r Reporter, p *config.Project, force bool) error {
	var msgs []string
	var first *explain.Finding
	found := explain.Preflight(ctx, h, p, "")
	for k, f := range found {
		switch {
		case f.Denied && force:
			warn(r, "%s: %s (--force: serving anyway)", f.Reason, f.Message)
			continue
		case !f.Certain():
			warn(r, "%s: %s; %s", f.Reason, f.Message, f.Unsure)
			aside(r, "%s", hintOf(f.Explained))
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

// ForceHint is the end of the hint of what serve refuses on what it
// found on the host, and --force lets through.
const ForceHint = "; `bm2 serve --force` serves it anyway"

// heldErr refuses to serve p on a port that a listener its instances
// cannot join holds (what bm2 check calls a problem), before anything is
// written; with force it warns and goes on. A port that could not be
// probed is a warning.
func heldErr(ctx context.Context, eh explain.Host, r Reporter, p *config.Project, force bool) error {
	s := explain.SeePorts(ctx, eh, p)
	if s.Err != nil {
		warn(r, "ports %s could not be probed: %v", p.Ports(), s.Err)
		return nil
	}
	held := explain.Held(ctx, eh, p, s)
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
			warn(r, "%s (--force: serving anyway)", msg)
			continue
		}
		msgs = append(msgs, msg)
	}
	if force {
		return nil
	}
	return fail(Invalid, hint+ForceHint, errors.New(strings.Join(msgs, "\n")))
}

// ownPorts returns the ports that the registered project of that name
// holds through instances systemd runs right now. It is best effort: when
// systemd is not reachable (check works without it), nothing is known to
// be the project's own.
func ownPorts(ctx context.Context, find func(string) (config.Entry, error), connect func(context.Context) (Systemd, error), name string) map[int]bool {
	own := map[int]bool{}
	e, err := find(name)
	if err != nil || e.Project == nil {
		return own
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	sd, err := connect(ctx)
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

// Explainer is the scope as package explain reads it (explain.Scope).
func (c *Client) Explainer() explain.Host {
	holder := c.PortHolder
	if holder == nil {
		holder = hooks.ForeignHolder
	}
	return explain.Scope{
		Journal: scopeJournal(&c.Env), Time: c.Now, Users: c.Accounts, Lookup: c.LookupUser,
		Opens: c.Access, Owner: c.PathOwner, Probe: c.CheckPorts, Holder: holder,
		Running: func(ctx context.Context, name string) map[int]bool {
			return ownPorts(ctx, c.FindProject, c.Connect, name)
		},
		RunningAs: func(ctx context.Context, p *config.Project) (identity.Identity, bool) {
			return runningIdentity(ctx, c.Connect, p)
		},
	}
}

// scopeJournal is the scope's journal as an explanation reads it.
func scopeJournal(e *Env) explain.Journal {
	return explain.Journal{Read: e.ReadJournal, Scope: scope.Of(e.Layout), Clock: e.Clock}
}
