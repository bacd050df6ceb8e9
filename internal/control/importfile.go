package control

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
