package control

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/pm2/convert"
	"github.com/bm2dev/bm2/internal/pm2/ecosystem"
)

// LoadEcosystem reads the ecosystem file or dump.pm2 bm2 import was given
// (package ecosystem), once, through Env.ReadFile: JavaScript is evaluated
// by a node found on $PATH or systemd's search path.
func (c *Client) LoadEcosystem(ctx context.Context, file string) (convert.Source, *ecosystem.Evaluated, error) {
	return ecosystem.Load(ctx, file, ecosystem.Options{Dirs: c.importNodeDirs(), Read: c.ReadFile})
}

// importNodeDirs is where bm2 import looks for the node that evaluates a
// JavaScript ecosystem file: $PATH, then systemd's search path.
func (c *Client) importNodeDirs() []string {
	return append(filepath.SplitList(c.Getenv("PATH")), c.RuntimeDirs...)
}

// DirOwner names a directory's owner when it is not root.
func (c *Client) DirOwner(dir string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil || st.Uid == 0 {
		return ""
	}
	if u, err := c.Accounts.UserID(int(st.Uid)); err == nil {
		return u.Name
	}
	return strconv.Itoa(int(st.Uid))
}

// ImportRuntime checks the runtime an imported project would run, as
// bm2 check does: systemd's search path, or runtime_path; its --version
// is asked as the user the file the app comes from speaks for (nobody
// for root's, or for a file no single user could have written), never
// as root, and never as whoever owns the binary (a link
// swapped after a look at it would run someone's program as them); run by
// root, a binary anyone but root can replace is not run at all.
func (c *Client) ImportRuntime(ctx context.Context, kind config.Runtime, runtimePath string, owner int) string {
	command := string(kind)
	if runtimePath != "" {
		command = runtimePath
	}
	id := Nobody
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
			if who, ok := c.Replaceable(path); ok {
				return "", &jsruntime.NotRunError{Why: fmt.Sprintf("%s can be replaced by %s; the run wrapper checks it at each start", path, who)}
			}
		}
		return c.RuntimeVersion(ctx, id, path)
	}
	rc := jsruntime.Check(ctx, kind, command, c.RuntimeDirs, ask)
	if rc.OK() {
		return ""
	}
	return rc.Problem + " (" + jsruntime.Advice(kind) + ")"
}

// WriteOptions say how [WriteIfChanged] writes: Secret for a file of
// secrets, Create to make its directory.
type WriteOptions struct{ Secret, Create bool }

// WriteIfChanged writes data, which is what (for errors: "the nginx
// configuration"), to path atomically unless it is a file that holds the
// same bytes with its mode already, and tells whether it wrote. The mode
// is perm, or a file's own where that is tighter: a mode an operator
// narrowed stays, and a Secret's manifest left readable by everyone is
// written again with its 0600. With o.Create, the directory is made when
// missing.
//
// Root writes these into directories that may be a user's, named on the
// command line (--out). So the path is walked as bm2 import's is
// ([WriteImported]): one component at a time, a symbolic link followed
// only where root owns it and its directory, the file itself never
// followed, and in a user's directory the file is written as that user.
// A Secret (o.Secret) is never written into another user's directory:
// what it holds is root's to give.
func WriteIfChanged(path string, data []byte, perm os.FileMode, what string, o WriteOptions) (bool, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	dir, name := filepath.Dir(path), filepath.Base(path)
	d, err := openDir(dir, o.Create)
	if err != nil {
		return false, fmt.Errorf("write %s to %s: %w", what, path, err)
	}
	defer d.Close()
	dst, err := d.Stat()
	if err != nil {
		return false, fmt.Errorf("write %s to %s: %w", what, path, err)
	}
	foreign := os.Geteuid() == 0 && dst.Uid != 0
	if o.Secret && foreign {
		return false, fail(Failed, "give --out a directory root owns, or export as the directory's owner",
			fmt.Errorf("write %s: %s belongs to uid %d: root does not write a Secret into another user's directory", what, dir, dst.Uid))
	}
	mode := perm.Perm()
	old, oldMode, err := readNoFollowMode(d.Fd(), name)
	switch {
	case err != nil:
		return false, fmt.Errorf("read %s: %w", path, err)
	case old != nil:
		mode &= oldMode
		if mode == oldMode && bytes.Equal(old, data) {
			return false, nil
		}
	}
	work := func() error { return d.Write(name, data, mode) }
	if foreign {
		id := identity.Identity{UID: int(dst.Uid), GID: int(dst.Gid)}
		err = identity.Do(id, work)
	} else {
		err = work()
	}
	if err != nil {
		return false, fmt.Errorf("write %s to %s: %w", what, path, err)
	}
	return true, nil
}
