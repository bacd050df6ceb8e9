// Package account is what a project that changes accounts (its own,
// systemd's DynamicUser=, and a user = account, either way) needs for its
// next start: what systemd left behind of the other account's runs
// (TidyRunDirs), which account its running instances run as (Other), and
// why a cluster-mode project restarts in place of a rolling restart
// (MoveText). Plain functions over a layout and a user database; package
// control calls them.
package account

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/units"
)

// TidyRunDirs removes, before instances ids of p start, a link systemd
// 252 leaves in /run/bm2 that keeps the next run from starting. A run on
// the project's own account (DynamicUser=) keeps its RuntimeDirectory=
// in /run/private/bm2/<instance>, linked from /run/bm2/<instance>; when
// the instance stops for good, systemd removes the directory and leaves
// the link. A run on the account user = names then fails at every start
// with exit status 233/RUNTIME_DIRECTORY, systemd finding the link where
// its directory goes and nothing behind it. Only such a dangling link is
// removed (a run on the project's own account makes a new one), and only
// in system scope (l): a user's manager has no DynamicUser=. The surge's
// link goes too. What cannot be removed is a warning (warn).
func TidyRunDirs(l layout.Layout, p *config.Project, ids []int, warn func(format string, args ...any)) {
	if l.IsUser() {
		return
	}
	run := l.RunStateDir
	private := filepath.Join(filepath.Dir(run), "private", filepath.Base(run))
	for _, i := range append(slices.Clone(ids), units.Surge) {
		id := units.InstanceID(p.Name, i)
		link := filepath.Join(run, id)
		if err := removeDangling(link, filepath.Join(private, id)); err != nil {
			warn("%v; if %s fails to start with exit status 233/RUNTIME_DIRECTORY, remove %s", err, id, link)
		}
	}
}

// removeDangling removes link when it is a symbolic link to target (as
// systemd makes it, relative or not) and target does not exist.
func removeDangling(link, target string) error {
	to, err := os.Readlink(link)
	if err != nil {
		return nil // no link: nothing of systemd's there
	}
	if !filepath.IsAbs(to) {
		to = filepath.Join(filepath.Dir(link), to)
	}
	if filepath.Clean(to) != filepath.Clean(target) {
		return nil
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the stale link %s: %w", link, err)
	}
	return nil
}

// Other is the account p's running instances (statuses) run as
// when it is not the one p names (p.Account()): the project changed
// accounts since they started. "" when they run as p's, none runs, or
// bm2 cannot tell (user scope l, where everything runs as the user, or
// no user database: accts nil).
func Other(l layout.Layout, accts trust.Accounts, p *config.Project, statuses []view.UnitStatus) string {
	if l.IsUser() || accts == nil {
		return ""
	}
	want := p.Account()
	for _, u := range statuses {
		if u.MainPID == 0 || u.UID == sysd.NoID {
			continue
		}
		if a, err := accts.UserID(int(u.UID)); err == nil && a.Name != "" {
			if a.Name != want {
				return a.Name
			}
			continue
		}
		// Not in the user database (a dynamic account systemd no longer
		// lists): another account when p's resolves to another uid.
		if a, err := accts.User(want); err == nil && a.UID != int(u.UID) {
			return fmt.Sprintf("uid %d", u.UID)
		}
	}
	return ""
}

// MoveText says why a cluster-mode project that changes accounts
// restarts all at once.
func MoveText(p *config.Project, from string) string {
	return fmt.Sprintf("%s runs as %s and is to run as %s: the instances of two accounts cannot share port %d "+
		"(SO_REUSEPORT joins only one user's sockets), so its instances restart all at once, not one at a time",
		p.Name, from, p.Account(), p.Port)
}
