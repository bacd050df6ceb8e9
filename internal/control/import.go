package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	"github.com/bm2dev/bm2/internal/safefs"
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

// WriteIfChanged writes data, which is what (for errors: "the nginx
// configuration"), to path atomically (mode perm) unless it is a file
// that holds the same bytes with that mode already, and tells whether it
// wrote. A file with other permissions is written again: a Secret's
// manifest left readable by everyone gets its 0600.
func WriteIfChanged(path string, data []byte, perm os.FileMode, what string) (bool, error) {
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.Mode().IsRegular() && st.Mode().Perm() == perm.Perm():
		old, err := os.ReadFile(path)
		if err != nil {
			return false, fmt.Errorf("read %s: %w", path, err)
		}
		if bytes.Equal(old, data) {
			return false, nil
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := safefs.Write(path, data, perm); err != nil {
		return false, fmt.Errorf("write %s: %w", what, err)
	}
	return true, nil
}
