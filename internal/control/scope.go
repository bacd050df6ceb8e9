package control

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bm2dev/bm2/internal/analyze"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
)

// ChooseScope is the layout a command runs in (scope.Choose), its
// refusal classed for cli.
func ChooseScope(choice layout.Kind) (layout.Layout, error) {
	l, err := scope.Choose(choice)
	var r *scope.Refusal
	if errors.As(err, &r) {
		code := Failed
		if r.Usage {
			code = BadArg
		}
		return l, fail(code, r.Fix, r.Err)
	}
	return l, err
}

// Scope is the scope the command runs in (scope.Scope).
func (c *Client) Scope() scope.Scope {
	return scope.Scope{Chosen: c.Layout, NumCPU: c.NumCPU, MinPort: c.MinPort, SystemPath: c.SystemSearchPath}
}

// userDefaults are the Env defaults of user scope.
func (e *Env) userDefaults() {
	l := *e.Layout
	if e.Connect == nil {
		e.Connect = func(ctx context.Context) (Systemd, error) {
			c, err := sysd.ConnectUser(ctx, l.PrivateSocket)
			if err != nil {
				return nil, err
			}
			return c, nil
		}
	}
	if e.LookupUser == nil {
		e.LookupUser = func(ctx context.Context, name, group string) (identity.Identity, error) {
			id := identity.Self()
			id.Name = l.Name
			return id, nil
		}
	}
	if e.Security == nil {
		e.Security = func(ctx context.Context, unit string) (string, error) {
			return analyze.Security(ctx, unit, "--user")
		}
	}
	if e.Journal == nil {
		uid := l.UID
		e.Journal = func(ctx context.Context, unit string, n int) ([]string, error) {
			return journal.UserUnitTail(ctx, uid, unit, n)
		}
	}
}

// scopedJournal makes every journal query of user scope the user's own
// (journal.Query.User).
func scopedJournal(read func(context.Context, journal.Query, func(journal.Entry) error) error, uid string) func(context.Context, journal.Query, func(journal.Entry) error) error {
	return func(ctx context.Context, q journal.Query, each func(journal.Entry) error) error {
		q.User = uid
		return read(ctx, q, each)
	}
}

// CheckSystemConflict refuses, in user scope s, a project whose port range
// overlaps a system project's (the ones in /etc/bm2 a user can read): the
// ports are the host's, whichever manager runs the app. The fix names the
// file the project comes from (its bm2.toml), not the registered file,
// which a project not registered yet does not have.
func CheckSystemConflict(s scope.Scope, p *config.Project) error {
	h, pr, hr, ok := s.SystemConflict(p)
	if !ok {
		return nil
	}
	return fail(Invalid, fmt.Sprintf("choose another port in %s: the system project %s is root's (`bm2 --system list` shows it)", scope.SourceText(s.Layout(), p), h.Name),
		fmt.Errorf("%w: %s port range %s overlaps system project %s %s (%s)", config.ErrConflict, p.Name, pr, h.Name, hr, h.File))
}

// journalUser is whose entries a journal query of the scope reads: the
// UID of user scope, "" in system scope (journal.Query.User).
func journalUser(c *Client) string {
	if !c.Scope().IsUser() {
		return ""
	}
	return strconv.Itoa(c.Layout.UID)
}
