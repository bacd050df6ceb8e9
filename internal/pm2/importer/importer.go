// Package importer is what bm2 import (and bm2 start <script>) needs of
// the host around packages ecosystem and convert: the ecosystem file read
// once, the owner of an app's directory, and the runtime an imported
// project would run, checked as bm2 check does.
package importer

import (
	"context"
	"fmt"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/pm2/convert"
	"github.com/bm2dev/bm2/internal/pm2/ecosystem"
	"github.com/bm2dev/bm2/internal/trust"
)

// Load reads the ecosystem file or dump.pm2 bm2 import was given
// (package ecosystem), once, through read (Env.ReadFile): JavaScript is
// evaluated by a node found in dirs (NodeDirs).
func Load(ctx context.Context, file string, dirs []string, read func(path string) (trust.File, error)) (convert.Source, *ecosystem.Evaluated, error) {
	return ecosystem.Load(ctx, file, ecosystem.Options{Dirs: dirs, Read: read})
}

// NodeDirs is where bm2 import looks for the node that evaluates a
// JavaScript ecosystem file: $PATH (path), then systemd's search path
// (runtimeDirs).
func NodeDirs(path string, runtimeDirs []string) []string {
	return append(filepath.SplitList(path), runtimeDirs...)
}

// DirOwner names a directory's owner when it is not root, from the
// user database accounts.
func DirOwner(dir string, accounts trust.Accounts) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil || st.Uid == 0 {
		return ""
	}
	if u, err := accounts.UserID(int(st.Uid)); err == nil {
		return u.Name
	}
	return strconv.Itoa(int(st.Uid))
}

// Host is what Runtime asks of the host: systemd's search path, who can
// replace a binary (Env.Replaceable), and a runtime's --version as an
// account (Env.RuntimeVersion).
type Host struct {
	Dirs        []string
	Replaceable func(path string) (string, bool)
	Version     func(ctx context.Context, id identity.Identity, path string) (string, error)
}

// Runtime checks the runtime an imported project would run, as bm2
// check does: systemd's search path, or runtime_path; its --version is
// asked as the user the file the app comes from speaks for (nobody for
// root's, or for a file no single user could have written), never as
// root, and never as whoever owns the binary (a link swapped after a look
// at it would run someone's program as them); run by root, a binary
// anyone but root can replace is not run at all.
func Runtime(ctx context.Context, h Host, kind config.Runtime, runtimePath string, owner int) string {
	command := string(kind)
	if runtimePath != "" {
		command = runtimePath
	}
	id := identity.Nobody
	if owner > 0 {
		if u, err := user.LookupId(strconv.Itoa(owner)); err == nil {
			if gid, err := strconv.Atoi(u.Gid); err == nil {
				id = identity.Identity{Name: u.Username, UID: owner, GID: gid}
			}
		}
	}
	ask := func(ctx context.Context, path string) (string, error) {
		if identity.Self().UID == 0 {
			// Not outside a sandbox: no project's sandbox exists yet.
			if who, ok := h.Replaceable(path); ok {
				return "", &jsruntime.NotRunError{Why: fmt.Sprintf("%s can be replaced by %s; the run wrapper checks it at each start", path, who)}
			}
		}
		return h.Version(ctx, id, path)
	}
	rc := jsruntime.Check(ctx, kind, command, h.Dirs, ask)
	if rc.OK() {
		return ""
	}
	return rc.Problem + " (" + jsruntime.Advice(kind) + ")"
}
