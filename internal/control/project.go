package control

import (
	"context"
	"fmt"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/trust"
)

// ProjectFileName is the project file bm2 serve and bm2 check read in a
// project dir (registry.ProjectFileName).
const ProjectFileName = registry.ProjectFileName

// entry is one project found along the search path.
type entry = config.Entry

// Usable returns the project of an entry, or the reason it has no units.
func Usable(e entry) (*config.Project, error) {
	if e.Err != nil {
		return nil, fail(Invalid, fmt.Sprintf("fix %s and run `bm2 check %s`; bm2 list shows why it is invalid", e.Path, e.Path),
			fmt.Errorf("project %s is invalid, so systemd has no units for it: %w", e.Name, e.Err))
	}
	return e.Project, nil
}

// policy is trust's policy with this host's accounts and systemd: a
// unit's state is asked of systemd, connected on first use.
func policy(ctx context.Context, accounts trust.Accounts, connect func(context.Context) (Systemd, error)) (trust.Policy, func()) {
	var sd Systemd
	var cerr error
	connected := false
	pol := trust.Policy{Accounts: accounts, UnitState: func(u string) (string, error) {
		if !connected {
			// The connection lives as long as the context it was made
			// with: the command's.
			connected = true
			sd, cerr = connect(ctx)
		}
		if cerr != nil {
			return "", fmt.Errorf("systemd is not reachable: %w", cerr)
		}
		st, err := sd.Units(ctx, []string{u})
		if err != nil {
			return "", err
		}
		if st[0].LoadState == "not-found" {
			return "", nil
		}
		return st[0].UnitFileState, nil
	}}
	return pol, func() {
		if sd != nil {
			sd.Close()
		}
	}
}

// Verdict applies the policy (package trust) to a project whose file
// speaks for o.UID; trusted is --trust-file, the operator's word. In user
// scope every project runs as the user, under their own manager: there
// is nothing to ask root for.
func (c *Client) Verdict(ctx context.Context, p *config.Project, o trust.Origin, trusted bool) trust.Verdict {
	if trusted || c.Scope().IsUser() || o.UID == 0 {
		return trust.Verdict{}
	}
	pol, done := policy(ctx, c.Accounts, c.Connect)
	defer done()
	return pol.Check(p, o)
}

// Vouch is verdict for a command that acts on the project: a refusal is
// an error naming every key refused and its fix; what passes is made
// what root grants (wants and requires become ordering only, said on
// out).
func (c *Client) Vouch(ctx context.Context, p *config.Project, o trust.Origin, trusted bool) error {
	v := c.Verdict(ctx, p, o, trusted)
	if !v.OK() {
		return refusedErr(v.Refused)
	}
	if trusted || c.Scope().IsUser() || o.UID == 0 {
		return nil
	}
	if len(p.Wants)+len(p.Requires) > 0 {
		say(c.Report, "%s: wants and requires order %s after %s only: a file root did not write starts no unit",
			o.File, p.Name, strings.Join(v.After, ", "))
	}
	trust.Apply(p, v)
	return nil
}

// refusedErr is the error of a file that asked for more than its
// speaker may have.
func refusedErr(rs trust.Refusals) error {
	noun := "thing"
	if len(rs) > 1 {
		noun = "things"
	}
	return fail(Invalid, "change the file as said, or, as root having read it, run the command again with --trust-file",
		fmt.Errorf("refused %d %s that a file root did not write asks root for (a file speaks only for its owner):\n  %s",
			len(rs), noun, strings.ReplaceAll(rs.Error(), "\n", "\n  ")))
}

// runsAs names the account and group the project's instances run as in
// scope l: in user scope the user's own.
func runsAs(l layout.Layout, accounts trust.Accounts, p *config.Project) string {
	if l.IsUser() {
		who := l.UID
		if u, err := accounts.UserID(who); err == nil {
			if g, err := accounts.GroupID(u.GID); err == nil {
				return u.Name + ":" + g.Name
			}
			return u.Name
		}
		return fmt.Sprintf("uid %d", who)
	}
	return trust.RunsAs(p, accounts)
}

// Summary is a project's summary line with who it runs as:
// `project "api", 4 x cluster on port 3000, runtime bun, as alice:alice`.
func (c *Client) Summary(p *config.Project) string {
	return p.Summary() + ", as " + runsAs(c.Scope().Layout(), c.Accounts, p)
}

// refuseSurge is the error for a command that does not manage the surge
// instance by itself.
func refuseSurge(name, arg string) error {
	return fail(NoProject, fmt.Sprintf("`bm2 reload %s` starts and retires it; `bm2 logs %s` shows its output", name, arg),
		fmt.Errorf("%s is the surge instance of %s's reloads, not an instance to manage by itself", arg, name))
}
