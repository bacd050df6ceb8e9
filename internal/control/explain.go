package control

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/hooks"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/scope"
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

// preflightErr is serve's refusal of the certain preflight failures
// (explain.Unfit), what it goes on despite told to r.
func preflightErr(ctx context.Context, h explain.Host, r Reporter, p *config.Project, force bool) error {
	return refusal(explain.Unfit(ctx, h, reporterOf(r), p, force))
}

// heldErr refuses to serve p on a port that a listener its instances
// cannot join holds (explain.HeldOff), before anything is written.
func heldErr(ctx context.Context, h explain.Host, r Reporter, p *config.Project, force bool) error {
	return refusal(explain.HeldOff(ctx, h, reporterOf(r), p, force))
}

// refusal is what serve refuses, as an invalid project with its fix.
func refusal(problems error, fix string) error {
	if problems == nil {
		return nil
	}
	return fail(Invalid, fix, problems)
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
		Connect: func(ctx context.Context) (explain.Systemd, error) { return c.Connect(ctx) },
		// Looked up at the call, not now: a snapshot builds an
		// Explainer for every instance and rarely asks.
		Find: func(name string) (config.Entry, error) { return c.Projects().Find(name) },
	}
}

// scopeJournal is the scope's journal as an explanation reads it.
func scopeJournal(e *Env) explain.Journal {
	return explain.Journal{Read: e.ReadJournal, Scope: scope.Of(e.Layout), Clock: e.Clock}
}
