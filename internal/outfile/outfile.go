// Package outfile writes the files bm2 makes for the user (bm2 import's
// and bm2 init's bm2.toml, bm2 export's manifests, bm2 gateway's
// configuration) into directories that may be a user's, without following
// a symbolic link a user could have made, and as the directory's owner.
package outfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/safefs"
	"golang.org/x/sys/unix"
)

// openDir opens dir (absolute) without following a symbolic link a user
// could have made (safefs.FollowRootOwned). With create, missing
// directories are made (mode 0755).
func openDir(dir string, create bool) (*safefs.Dir, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%s is not an absolute path", dir)
	}
	d, err := safefs.OpenDir(dir, safefs.Policy{Follow: safefs.FollowRootOwned, Create: create, NoDotDot: true})
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err == unix.ELOOP {
		return nil, fmt.Errorf("%s is a symbolic link that root does not own: bm2 does not follow it (give the real path)", pe.Path)
	}
	return d, err
}

// Refusal is a write bm2 does not make, and what the user can do instead.
type Refusal struct {
	Fix string
	Err error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// WriteResult is what WriteImported did.
type WriteResult int

const (
	Written WriteResult = iota
	Unchanged
	Differs // not overwritten: old holds what is there
)

// WriteImported writes data to file unless it holds the same already;
// a file that differs is replaced only with force. mode is the new file's
// permission bits. When owner >= 0, the directory must belong to that
// user (or root, when owner is 0): an ecosystem file may only make bm2
// write into its owner's directories.
//
// bm2 import runs as root and writes into directories that belong to the
// app's user, who could put a symbolic link where bm2.toml goes (or in
// place of a directory on the way) to make root write somewhere else. So
// the path is walked from / one component at a time (safefs.OpenDir,
// safefs.FollowRootOwned): a symbolic link is followed only when root owns
// it and the directory that holds it, which no other user can write (a
// system's /var/run -> /run; never one a user made), and the final file is
// never followed. In a directory that is a user's, the file is created as
// that user (the filesystem UID of one thread, see identity.Do), so that
// it is theirs to edit and no permission is root's; it is written to a new
// temporary name (O_EXCL) and renamed over bm2.toml (safefs.Dir.Write),
// which replaces a symbolic link there rather than following it.
func WriteImported(file string, data []byte, mode os.FileMode, force, create bool, owner int) (WriteResult, []byte, error) {
	dir, name := filepath.Dir(file), filepath.Base(file)
	d, err := openDir(dir, create)
	if err != nil {
		return 0, nil, fmt.Errorf("write %s: %w", file, err)
	}
	defer d.Close()
	dst, err := d.Stat()
	if err != nil {
		return 0, nil, fmt.Errorf("write %s: %w", file, err)
	}
	if owner > 0 && int(dst.Uid) != owner {
		return 0, nil, fmt.Errorf("%s belongs to uid %d, not to uid %d, who owns the file it was imported from: bm2 import writes only into its owner's directories (use --out)", dir, dst.Uid, owner)
	}
	old, err := readNoFollow(d.Fd(), name)
	switch {
	case err != nil:
		return 0, nil, fmt.Errorf("read %s: %w", file, err)
	case old != nil && bytes.Equal(old, data):
		return Unchanged, old, nil
	case old != nil && !force:
		return Differs, old, nil
	}
	work := func() error { return d.Write(name, data, mode) }
	if os.Geteuid() == 0 && dst.Uid != 0 {
		// As the directory's owner: the file is theirs, and so is every
		// permission check.
		id := identity.Identity{UID: int(dst.Uid), GID: int(dst.Gid)}
		if err := identity.Do(id, work); err != nil {
			return 0, nil, fmt.Errorf("write %s as uid %d: %w", file, dst.Uid, err)
		}
	} else if err := work(); err != nil {
		return 0, nil, fmt.Errorf("write %s: %w", file, err)
	}
	return Written, old, nil
}

// readNoFollow reads name in dfd: nil when it does not exist, an error
// when it is a symbolic link or not a regular file.
func readNoFollow(dfd int, name string) ([]byte, error) {
	b, _, err := readNoFollowMode(dfd, name)
	return b, err
}

// readNoFollowMode is readNoFollow with the file's permission bits.
func readNoFollowMode(dfd int, name string) ([]byte, os.FileMode, error) {
	fd, err := safefs.OpenAt(dfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	switch {
	case err == unix.ENOENT:
		return nil, 0, nil
	case err == unix.ELOOP:
		return nil, 0, errors.New("it is a symbolic link: remove it (bm2 does not follow it)")
	case err != nil:
		return nil, 0, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, errors.New("it is not a regular file")
	}
	// Past 1 MiB it is no bm2.toml import wrote: what it holds Differs,
	// and its first MiB shows that.
	b, err := safefs.ReadAll(f, 1<<20)
	if errors.Is(err, safefs.ErrTooLarge) {
		err = nil
	}
	return b, st.Mode().Perm(), err
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
		return false, &Refusal{Fix: "give --out a directory root owns, or export as the directory's owner",
			Err: fmt.Errorf("write %s: %s belongs to uid %d: root does not write a Secret into another user's directory", what, dir, dst.Uid)}
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
